import type OpenAI from "openai";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { chat, uniqueModel } from "./helpers";
import { learningRan, settled } from "./settled";
import { scriptChatUpstream, type ChatScriptBody } from "./upstream-stub";

/** The treasury desk the test scripts: merchant categories 6011 (cash) and 7995 (gambling) refused, others paid. */
function desk(body: ChatScriptBody): string {
  const invoice = /Pay (\S+)$/.exec(body.messages[1].content)?.[1] ?? "";
  const mcc = (JSON.parse(body.messages[3].content) as { invoice: { merchant: { mcc: string } } }).invoice.merchant.mcc;
  return ["6011", "7995"].includes(mcc) ? `${invoice}: category ${mcc} refused.` : `${invoice}: paid at MCC ${mcc}.`;
}

let upstream = { asked: 0 };
beforeEach(() => {
  upstream = scriptChatUpstream(desk);
});
afterEach(() => vi.restoreAllMocks());

/** The request after the invoice lookup: the tool result holds the merchant category as a JSON string, two deep. */
const pay = (model: string, invoice: string, mcc: string) => ({
  model,
  messages: [
    { role: "system", content: "Merchant categories 6011 and 7995 are refused." },
    { role: "user", content: `Pay ${invoice}` },
    {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "call_1", type: "function", function: { name: "get_invoice", arguments: JSON.stringify({ invoice_id: invoice }) } }],
    },
    { role: "tool", tool_call_id: "call_1", content: JSON.stringify({ invoice: { id: invoice, merchant: { mcc } } }) },
  ],
});

async function send(model: string, invoice: string, mcc: string) {
  const res = await chat(pay(model, invoice, mcc));
  const body = (await res.json()) as OpenAI.ChatCompletion;
  return { cache: res.headers.get("muscle-mem-cache"), learned: res.headers.get("muscle-mem-template") !== null, content: body.choices[0].message.content };
}

describe("learned templates through the Worker: a merchant category code is a code, never ranged", () => {
  it("Should refuse MCC 6011 (cash) from the model after payments at 5411, 7011 and 5812, and serve a confirmed category", async () => {
    const model = uniqueModel("hunt5-mcc");
    await settled(async () => {
      for (const [invoice, mcc] of [
        ["INV-10001", "5411"],
        ["INV-10002", "7011"],
        ["INV-10003", "5812"],
      ] as const)
        expect((await send(model, invoice, mcc)).cache).toBe("miss");
    });
    await learningRan();
    // The template serves: a new invoice at a confirmed category.
    expect(await settled(() => send(model, "INV-10004", "7011"))).toEqual({ cache: "hit", learned: true, content: "INV-10004: paid at MCC 7011." });
    // 6011 lies between 5411 and 7011: ranged as a number, it was paid.
    expect(await settled(() => send(model, "INV-10005", "6011"))).toEqual({ cache: "miss", learned: false, content: "INV-10005: category 6011 refused." });
    expect(upstream.asked).toBe(4);
  });
});
