import type OpenAI from "openai";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { scriptChatUpstream } from "./chat-upstream.support";
import { chat, uniqueModel } from "./helpers";
import { learningRan, settled } from "./settled";

/**
 * The sixth template hunt, on Chat Completions: a template learned from three orders, then a fourth that
 * differs from them in one field the model reads (the tool result's value type, `null` or missing, key
 * order, NFC or NFD, whitespace inside a copied value, a value that appears twice, the tool call's id, `name`,
 * `refusal`, `audio`, content parts). The scripted model reads the request's text: it refunds only the
 * desk's usual shape and says what is odd otherwise, and it copies the customer's name byte for byte; so
 * a template serving an odd request shows as an answer other than the model's.
 */

type Message = { role: string; content?: unknown; name?: string; refusal?: string; tool_calls?: unknown[]; [k: string]: unknown };

/** Why the desk's model would not refund this request as usual, or null (the usual shape). */
function oddity(messages: Message[]): string | null {
  if (messages.some((m) => "name" in m)) return "a named message";
  if (messages.some((m) => "refusal" in m)) return "an earlier refusal";
  if (typeof messages[1].content !== "string") return "the request in parts";
  const result = messages.at(-1)?.content;
  const order = JSON.parse(String(result)) as Record<string, unknown>;
  if (Object.keys(order).join() !== "order_id,customer,email,amount,coupon") return `the fields ${Object.keys(order).join()}`;
  if (typeof order.amount !== "number") return "an amount that is not a number";
  if (order.coupon !== null) return "a coupon";
  return null;
}

let upstream: { asked: () => number };
beforeEach(() => {
  upstream = scriptChatUpstream((body) => {
    const messages = body.messages as unknown as Message[];
    const result = JSON.parse(String(messages.at(-1)?.content)) as { order_id: string; customer: string; email: string; amount: unknown };
    const odd = oddity(messages);
    const content = odd
      ? `Order ${result.order_id} goes to a person: ${odd}.`
      : `Refunded ${result.amount} to ${result.customer} (${result.email}) on order ${result.order_id}.`;
    return { content };
  });
});
afterEach(() => vi.restoreAllMocks());

interface Order {
  order: string;
  customer: string;
  amount: number;
}
const ORDERS: Order[] = [
  { order: "A-1001", customer: "Ada Lovelace", amount: 120 },
  { order: "B-2002", customer: "Bob Stone", amount: 340 },
  { order: "C-3003", customer: "Cyd Moss", amount: 260 },
];

const emailOf = (customer: string) => `${customer.toLowerCase().replace(/\s+/g, ".")}@example.com`;
/** The model's answer to an order of the usual shape. */
const refunded = (o: Order) => `Refunded ${o.amount} to ${o.customer} (${emailOf(o.customer)}) on order ${o.order}.`;

/** The desk's request after the lookup; `edit` changes the messages (the tool result's text is `result`). */
function refund(model: string, o: Order, edit: (m: Message[], result: Record<string, unknown>) => string | undefined = () => undefined) {
  const result: Record<string, unknown> = { order_id: o.order, customer: o.customer, email: emailOf(o.customer), amount: o.amount, coupon: null };
  const messages: Message[] = [
    { role: "system", content: "Refund delivered orders; anything unusual goes to a person." },
    { role: "user", content: `Refund order ${o.order}` },
    {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "call_1", type: "function", function: { name: "get_order", arguments: JSON.stringify({ order_id: o.order }) } }],
    },
    { role: "tool", tool_call_id: "call_1", content: "" },
  ];
  messages[3].content = edit(messages, result) ?? JSON.stringify(result);
  return { model, messages };
}

async function send(body: unknown) {
  const res = await chat(body);
  const json = (await res.json()) as OpenAI.ChatCompletion;
  return { cache: res.headers.get("muscle-mem-cache"), learned: res.headers.get("muscle-mem-template") !== null, content: json.choices?.[0]?.message.content };
}

/** A model whose three orders taught a template; the template serves a fourth plain order (the tests can fail). */
async function taught(): Promise<string> {
  const model = uniqueModel("hunt6");
  await settled(async () => {
    for (const o of ORDERS) expect((await send(refund(model, o))).cache).toBe("miss");
  });
  await learningRan();
  const plain = { order: "D-4004", customer: "Dan Roe", amount: 200 };
  expect(await settled(() => send(refund(model, plain)))).toEqual({ cache: "hit", learned: true, content: refunded(plain) });
  return model;
}

const E: Order = { order: "E-5005", customer: "Eve Park", amount: 230 };
const withResult = (text: (r: Record<string, unknown>) => string) => (_: Message[], r: Record<string, unknown>) => text(r);

describe("the sixth template hunt: one field the model reads differs from the learned requests", () => {
  const variants: Array<[string, (m: Message[], r: Record<string, unknown>) => string | undefined, string]> = [
    ["the amount as a string", withResult((r) => JSON.stringify({ ...r, amount: String(r.amount) })), "an amount that is not a number"],
    ["the coupon missing, not null", withResult(({ coupon: _, ...r }) => JSON.stringify(r)), "the fields order_id,customer,email,amount"],
    [
      "the result's keys in another order",
      withResult((r) => JSON.stringify({ customer: r.customer, order_id: r.order_id, email: r.email, amount: r.amount, coupon: null })),
      "the fields customer,order_id,email,amount,coupon",
    ],
    ["a coupon code where null was", withResult((r) => JSON.stringify({ ...r, coupon: "null" })), "a coupon"],
    ["a name on the user message", (m) => void (m[1].name = "eve"), "a named message"],
    ["an earlier refusal", (m) => void (m[2].refusal = "I can't look that up."), "an earlier refusal"],
    [
      "the request in two text parts",
      (m) =>
        void (m[1].content = [
          { type: "text", text: "Refund order " },
          { type: "text", text: "E-5005" },
        ]),
      "the request in parts",
    ],
  ];
  it.each(variants)("Should send %s to the model", async (_, edit, why) => {
    const model = await taught();
    expect(await settled(() => send(refund(model, E, edit)))).toEqual({ cache: "miss", learned: false, content: `Order E-5005 goes to a person: ${why}.` });
    expect(upstream.asked()).toBe(4);
  });

  it("Should serve a copied name byte for byte (NFC), and miss NFD, a look-alike letter and odd spaces inside it", async () => {
    const model = await taught();
    const names: Array<[string, string]> = [
      ["Zo\u00eb No\u00ebl", "hit"],
      ["Zoe\u0308 Noe\u0308l", "miss"],
      // A Cyrillic `А` (scripts.ts): its shape, length and email's domain were those confirmed; served before.
      ["\u0410da Lovelace", "miss"],
      ["Ada\u00a0Lovelace", "miss"],
      ["Ada  Lovelace", "miss"],
      ["Ada Lovelace\u200b", "miss"],
      ["Ada\tLovelace", "miss"],
    ];
    const got: Array<[string, string | null]> = [];
    for (const [i, [customer]] of names.entries()) {
      const o = { order: `F-${6001 + i}`, customer, amount: 210 };
      const answer = await settled(() => send(refund(model, o)));
      // Served or not, the answer is the model's: the name as it was sent.
      expect(answer.content, JSON.stringify(customer)).toBe(refunded(o));
      got.push([customer, answer.cache]);
    }
    expect(got).toEqual(names);
  });

  it("Should serve another tool call id (ids are numbered, never read: docs/reliability.md) and bypass an assistant turn with audio", async () => {
    const model = await taught();
    const otherId = refund(model, E, (m) => {
      (m[2].tool_calls as Array<{ id: string }>)[0].id = "call_zz9";
      m[3].tool_call_id = "call_zz9";
      return undefined;
    });
    expect(await settled(() => send(otherId))).toEqual({ cache: "hit", learned: true, content: refunded(E) });
    const audio = refund(model, E, (m) => void (m[2].audio = { id: "audio_1" }));
    expect((await settled(() => send(audio))).cache).toBe("bypass");
  });

  it("Should not serve a request whose customer name equals the order id (two slots, one value) that the learned ones never had", async () => {
    const model = await taught();
    const same = { order: "G-7007", customer: "G-7007", amount: 210 };
    const got = await settled(() => send(refund(model, same)));
    expect(got).toEqual({ cache: "miss", learned: false, content: refunded(same) });
  });
});
