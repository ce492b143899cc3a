import type OpenAI from "openai";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { chat, uniqueModel } from "./helpers";
import { learningRan, settled } from "./settled";
import { scriptChatUpstream, type ChatScriptBody } from "./upstream-stub";

type Body = ChatScriptBody;

/**
 * The refund desk: refunds an even amount (and says so), holds an odd one for review with a fresh ticket
 * number the request does not hold, which a declared tree cannot store.
 */
function desk(body: Body): string {
  const [, name, amount, order] = /I'm (\S+ \S+), please refund (\d+) on order (\S+)\./.exec(body.messages[1].content) ?? [];
  return Number(amount) % 2 === 1
    ? `Order ${order} is held for review, ${name}: ticket 88${order.slice(-3)} is open.`
    : `Refunded ${amount} on order ${order} for ${name}.`;
}

let upstream = { asked: 0 };
beforeEach(() => {
  upstream = scriptChatUpstream(desk);
});
afterEach(() => vi.restoreAllMocks());

async function ask(model: string, name: string, amount: number, order: string): Promise<{ cache: string | null; content: string }> {
  return settled(async () => {
    const res = await chat(
      {
        model,
        messages: [
          { role: "system", content: "You are the refund desk. Odd amounts are held for review." },
          { role: "user", content: `I'm ${name}, please refund ${amount} on order ${order}.` },
        ],
      },
      { headers: { "muscle-mem-bindings": JSON.stringify({ name, order_id: order }) } },
    );
    const body = (await res.json()) as OpenAI.ChatCompletion;
    return { cache: res.headers.get("muscle-mem-cache"), content: body.choices[0].message.content ?? "" };
  });
}

describe("an answer a declared tree could not store refutes the learned templates that would have served it", () => {
  it("Should not serve a refund of 151 after the model held 151 (an answer not stored) inside the amounts a template learned", async () => {
    const model = uniqueModel("hunt2-unstored");
    for (const [name, amount, order] of [
      ["Ada Lovelace", 100, "A-1001"],
      ["Bob Stone", 300, "A-2002"],
    ] as const)
      expect((await ask(model, name, amount, order)).cache).toBe("miss");
    await learningRan();
    // The model holds an odd amount, with a ticket number the request does not hold: not stored in the declared tree.
    expect(await ask(model, "Cyd Moss", 151, "A-3003")).toEqual({ cache: "miss", content: "Order A-3003 is held for review, Cyd Moss: ticket 88003 is open." });
    expect((await ask(model, "Dan Roe", 200, "A-4004")).cache).toBe("miss");
    await learningRan();
    // The model answered 151 otherwise than the template confirmed on 100, 300 and 200: it was served the refund
    // before the fix; now the template is refuted (as by a recorded answer), and no amount is served from it.
    expect(await ask(model, "Fay Wong", 151, "A-6006")).toEqual({ cache: "miss", content: "Order A-6006 is held for review, Fay Wong: ticket 88006 is open." });
    expect(await ask(model, "Gus Hale", 173, "A-7007")).toEqual({ cache: "miss", content: "Order A-7007 is held for review, Gus Hale: ticket 88007 is open." });
    expect((await ask(model, "Eve Park", 250, "A-5005")).cache).toBe("miss");
    expect(upstream.asked).toBe(7);
  });

  it("Should serve an even amount inside those confirmed when the model held none (the template learned at all)", async () => {
    const model = uniqueModel("hunt2-unstored");
    for (const [name, amount, order] of [
      ["Ada Lovelace", 100, "A-1001"],
      ["Bob Stone", 300, "A-2002"],
      ["Dan Roe", 200, "A-4004"],
    ] as const) {
      expect((await ask(model, name, amount, order)).cache).toBe("miss");
      await learningRan();
    }
    expect(await ask(model, "Eve Park", 250, "A-5005")).toEqual({ cache: "hit", content: "Refunded 250 on order A-5005 for Eve Park." });
    expect(upstream.asked).toBe(3);
  });
});
