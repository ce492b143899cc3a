import type OpenAI from "openai";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { scriptChatUpstream } from "./chat-upstream.support";
import { api, newKey, ok, onlyTree } from "./api-helpers";
import { chat, uniqueModel } from "./helpers";
import { learningRan, settled } from "./settled";

/**
 * Chat's learned templates and numbers sent spelled otherwise than JSON.stringify writes them (`42.0`, `1e2`):
 * the request's hash reads the spelling (src/core/number-text.ts), its stored message holds the value, and a
 * template matches the stored form. The refund desk: the tool result carries the refund's `amount` as a field
 * of the tool message (kept as sent: src/core/canonical.ts), and the model copies its text as it read it.
 */

let upstream: { asked: () => number };
/** The model reads the body's text (a Python upstream keeps `42.0` a float) and copies the amount as written. */
beforeEach(() => {
  upstream = scriptChatUpstream((body, text) => {
    const order = /Refund order (\S+)/.exec(body.messages[1].content)?.[1] ?? "";
    const amount = /"amount":\s*([^,}\s]+)/.exec(text)?.[1] ?? "";
    return { content: `Refunded ${amount} on order ${order}.` };
  });
});
afterEach(() => vi.restoreAllMocks());

/** The desk's request after the order lookup, as raw JSON text: `amount` written exactly as given. */
const refund = (model: string, order: string, amount: string) =>
  `{"model":"${model}","messages":[` +
  `{"role":"system","content":"Refund delivered orders."},` +
  `{"role":"user","content":"Refund order ${order}"},` +
  `{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_order","arguments":"{\\"order_id\\":\\"${order}\\"}"}}]},` +
  `{"role":"tool","tool_call_id":"call_1","content":"{\\"order_id\\":\\"${order}\\",\\"status\\":\\"delivered\\"}","amount":${amount}}]}`;

async function send(key: string, model: string, order: string, amount: string) {
  const res = await chat(refund(model, order, amount), { key });
  const body = (await res.json()) as OpenAI.ChatCompletion;
  return {
    cache: res.headers.get("muscle-mem-cache"),
    learned: res.headers.get("muscle-mem-template") !== null,
    content: body.choices[0].message.content,
  };
}

/** Three orders with `amount` written as `amount`, each a miss, and the learning they queued run. */
async function teach(key: string, model: string, amount: string): Promise<void> {
  await settled(async () => {
    for (const order of ["A-1001", "B-2002", "C-3003"]) expect((await send(key, model, order, amount)).cache).toBe("miss");
  });
  await learningRan();
}

const templatesOf = async (key: string) =>
  (await ok<{ data: Array<{ confirmed: boolean }> }>(api(`/trees/${(await onlyTree(key)).id}/templates`, { token: key }))).data;

describe("chat's learned templates and numbers sent spelled otherwise", () => {
  it.each([
    ["42", "42.0"],
    ["100", "1e2"],
    ["0.5", "0.50"],
  ])("Should not serve a template learned on amount %s to a request that sent %s (the model copies the text it read)", async (plain, spelled) => {
    const key = newKey();
    const model = uniqueModel("tpl-spelled");
    await teach(key, model, plain);
    // The template serves the plain spelling: the test can fail.
    expect(await settled(() => send(key, model, "D-4004", plain))).toEqual({ cache: "hit", learned: true, content: `Refunded ${plain} on order D-4004.` });
    const res = await settled(() => chat(refund(model, "E-5005", spelled), { key }));
    const body = (await res.json()) as OpenAI.ChatCompletion;
    expect({ cache: res.headers.get("muscle-mem-cache"), template: res.headers.get("muscle-mem-template") }).toEqual({ cache: "miss", template: null });
    expect(body.choices[0].message.content).toBe(`Refunded ${spelled} on order E-5005.`);
    expect(res.headers.get("muscle-mem-template-miss")).toContain("spelled");
    expect(upstream.asked()).toBe(4);
  });

  it("Should learn nothing from requests that sent a spelling, and so serve a plain request nothing learned from them", async () => {
    const key = newKey();
    const model = uniqueModel("tpl-spelled-teach");
    await teach(key, model, "42.0");
    expect(await templatesOf(key)).toEqual([]);
    expect(await settled(() => send(key, model, "D-4004", "42"))).toEqual({ cache: "miss", learned: false, content: "Refunded 42 on order D-4004." });
    expect(upstream.asked()).toBe(4);
  });

  it("Should still serve an exact repeat of a spelled request from its own node", async () => {
    const key = newKey();
    const model = uniqueModel("tpl-spelled-exact");
    await settled(() => send(key, model, "A-1001", "42.0"));
    expect(await settled(() => send(key, model, "A-1001", "42.0"))).toEqual({ cache: "hit", learned: false, content: "Refunded 42.0 on order A-1001." });
    // The plain spelling is another node: the model answers it.
    expect(await settled(() => send(key, model, "A-1001", "42"))).toEqual({ cache: "miss", learned: false, content: "Refunded 42 on order A-1001." });
    expect(upstream.asked()).toBe(2);
  });
});
