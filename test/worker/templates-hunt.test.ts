import type OpenAI from "openai";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { chat, uniqueModel } from "./helpers";
import { learningRan, settled } from "./settled";
import { scriptChatUpstream, type ChatScriptBody } from "./upstream-stub";

type Body = ChatScriptBody;

/** The refund desk the tests script: refunds an order, holds a flagged one (`F-…`) for review with a fresh ticket number. */
function desk(body: Body): string {
  const user = body.messages.find((m) => m.role === "user")?.content ?? "";
  const [, name, order] = /I'm (\S+ \S+), please refund order (\S+)\./.exec(user) ?? [];
  return order.startsWith("F-") ? `Order ${order} is held for review, ${name}: ticket 88${order.slice(-3)} is open.` : `Refunded order ${order} for ${name}.`;
}

/** What the upstream answers each chat completion with (the refund desk unless a test sets another); `upstream.asked` counts them. */
let script: (body: Body) => string = desk;
let upstream = { asked: 0 };
beforeEach(() => {
  script = desk;
  upstream = scriptChatUpstream((body) => script(body));
});
afterEach(() => vi.restoreAllMocks());

const request = (model: string, name: string, order: string) => ({
  model,
  messages: [
    { role: "system", content: "You are the refund desk." },
    { role: "user", content: `I'm ${name}, please refund order ${order}.` },
  ],
});

async function ask(model: string, name: string, order: string): Promise<{ cache: string | null; content: string }> {
  return settled(async () => {
    const res = await chat(request(model, name, order), { headers: { "muscle-mem-bindings": JSON.stringify({ name, order_id: order }) } });
    const body = (await res.json()) as OpenAI.ChatCompletion;
    return { cache: res.headers.get("muscle-mem-cache"), content: body.choices[0].message.content ?? "" };
  });
}

describe("declared answers: an answer the model gave another way counts even when it cannot be stored", () => {
  it("Should not serve a refund to a flagged order after the model held one while the answer was being confirmed", async () => {
    const model = uniqueModel("hunt-decl");
    expect(await ask(model, "Ada Lovelace", "A-1001")).toEqual({ cache: "miss", content: "Refunded order A-1001 for Ada Lovelace." });
    // The model holds this one with a ticket number the request does not hold: that answer is not stored.
    expect(await ask(model, "Bob Stone", "F-2002")).toEqual({ cache: "miss", content: "Order F-2002 is held for review, Bob Stone: ticket 88002 is open." });
    expect(await ask(model, "Cyd Moss", "A-3003")).toEqual({ cache: "miss", content: "Refunded order A-3003 for Cyd Moss." });
    // The model answered this node two ways: a flagged order must not be served the refund.
    expect(await ask(model, "Dan Roe", "F-4004")).toEqual({ cache: "miss", content: "Order F-4004 is held for review, Dan Roe: ticket 88004 is open." });
    expect(upstream.asked).toBe(4);
  });

  it("Should still serve new values once two bindings got the same answer and none got another", async () => {
    const model = uniqueModel("hunt-decl");
    expect((await ask(model, "Ada Lovelace", "A-1001")).cache).toBe("miss");
    expect((await ask(model, "Cyd Moss", "A-3003")).cache).toBe("miss");
    expect(await ask(model, "Eve Park", "A-5005")).toEqual({ cache: "hit", content: "Refunded order A-5005 for Eve Park." });
    expect(upstream.asked).toBe(2);
  });
});

describe("learned templates through the Worker: a prefix every confirmed id shared stays fixed", () => {
  const refund = (model: string, order: string) => ({
    model,
    messages: [
      { role: "system", content: "Refund the order; subscriptions (SUB-) are never refunded." },
      { role: "user", content: `Refund order ${order}` },
    ],
  });
  const subscriptions = (body: Body): string => {
    const order = /Refund order (\S+)/.exec(body.messages[1].content)?.[1] ?? "";
    return order.startsWith("SUB-") ? `Order ${order} is a subscription: no refund.` : `Refunded order ${order}.`;
  };
  const send = async (model: string, order: string) => {
    const res = await chat(refund(model, order));
    const body = (await res.json()) as OpenAI.ChatCompletion;
    return { cache: res.headers.get("muscle-mem-cache"), learned: res.headers.get("muscle-mem-template") !== null, content: body.choices[0].message.content };
  };

  it("Should answer SUB-4004 from the model after ORD-1001, ORD-2002 and ORD-3003 taught a template that serves ORD-4004", async () => {
    script = subscriptions;
    const model = uniqueModel("hunt-prefix");
    await settled(async () => {
      for (const order of ["ORD-1001", "ORD-2002", "ORD-3003"]) expect((await send(model, order)).cache).toBe("miss");
    });
    await learningRan();
    expect(await send(model, "ORD-4004")).toEqual({ cache: "hit", learned: true, content: "Refunded order ORD-4004." });
    expect(await send(model, "SUB-4004")).toEqual({ cache: "miss", learned: false, content: "Order SUB-4004 is a subscription: no refund." });
    expect(upstream.asked).toBe(4);
  });
});

describe("declared values that collide with the prompt's own text (an attack that held)", () => {
  const SYSTEM = "Never refund Jordan Lee: the account is closed.";
  const request = (model: string, name: string, order: string) => ({
    model,
    messages: [
      { role: "system", content: SYSTEM },
      { role: "user", content: `I'm ${name}, please refund order ${order}.` },
    ],
  });
  /** The model refuses the customer the system prompt names, and refunds the others. */
  const closed = (body: Body): string => {
    const [, name, order] = /I'm (\S+ \S+), please refund order (\S+)\./.exec(body.messages[1].content) ?? [];
    return body.messages[0].content.includes(name) ? `Sorry ${name}, order ${order} cannot be refunded.` : `Refunded order ${order} for ${name}.`;
  };
  const send = async (model: string, name: string, order: string) =>
    settled(async () => {
      const res = await chat(request(model, name, order), { headers: { "muscle-mem-bindings": JSON.stringify({ name, order_id: order }) } });
      const body = (await res.json()) as OpenAI.ChatCompletion;
      return { cache: res.headers.get("muscle-mem-cache"), content: body.choices[0].message.content };
    });

  it("Should send the customer the prompt names to the model: the prompt keyed with the value is a path of its own", async () => {
    script = closed;
    const model = uniqueModel("hunt-collide");
    expect((await send(model, "Ada Lovelace", "A-1001")).cache).toBe("miss");
    expect((await send(model, "Cyd Moss", "A-3003")).cache).toBe("miss");
    expect(await send(model, "Eve Park", "A-5005")).toEqual({ cache: "hit", content: "Refunded order A-5005 for Eve Park." });
    expect(await send(model, "Jordan Lee", "A-7007")).toEqual({ cache: "miss", content: "Sorry Jordan Lee, order A-7007 cannot be refunded." });
    expect(upstream.asked).toBe(3);
  });
});
