import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/core/canonical";
import { childHash } from "../../src/core/hash";
import type { CanonicalMessage } from "../../src/core/messages";
import { compose, decompose } from "../../src/cache/templates/leaves";
import { apiMessageOf, chatViewOf } from "../../src/cache/templates/view";
import { keyGeminiAnswer, keyGeminiRequest, type GeminiKey } from "../../src/providers/gemini/key";
import type { Content, GenerateContentRequest } from "../../src/providers/gemini/schema";
import { geminiTemplateView as view } from "../../src/providers/gemini/template-view";

const scope = { tenant: "t", namespace: "default", maxMessageBytes: 900_000 };

function keyOf(contents: unknown[]): GeminiKey {
  const out = keyGeminiRequest({ contents } as GenerateContentRequest, "gemini-x", scope);
  if (!out.ok) throw new Error(JSON.stringify(out));
  return out.key;
}

/** The path messages as the nodes store them (their JSON parsed). */
const pathOf = (contents: unknown[]): unknown[] => keyOf(contents).path.map((s) => JSON.parse(s.json) as unknown);

/** The answer node keyGeminiAnswer stores for `parts` after `contents` (args texts as the model wrote them), and its hash. */
function answerOf(contents: unknown[], parts: unknown[], argsTexts: string[] = [], metadata: Record<string, unknown> = {}): { stored: unknown; hash: string } {
  const out = keyGeminiAnswer(keyOf(contents), { role: "model", parts } as Content, metadata, argsTexts);
  if (!out) throw new Error("not recorded");
  return { stored: JSON.parse(out.json) as unknown, hash: out.hash };
}

const user = (...parts: unknown[]) => ({ role: "user", parts });
const model = (...parts: unknown[]) => ({ role: "model", parts });
const call = (name: string, args?: unknown, id?: string) => ({ functionCall: { name, ...(args === undefined ? {} : { args }), ...(id ? { id } : {}) } });
const result = (name: string, response: unknown, id?: string) => ({ functionResponse: { name, response, ...(id ? { id } : {}) } });

/** A conversation with every part kind a node stores: texts, empty texts, thoughts, signatures, calls with and without args or ids, results, unknown fields. */
const RICH = [
  user({ text: "Refund order A-1001 for ada@example.com." }, { text: "" }, { text: "Thanks" }),
  model(
    { text: "plan", thought: true, thoughtSignature: "c2ln" },
    { text: "Looking " },
    { text: "it up." },
    call("get_order", { order_id: "A-1001", n: 2 }, "x1"),
  ),
  user(result("get_order", { order_id: "A-1001", email: "ada@example.com", cents: 1999, ok: true }, "x1")),
  model({ ...call("list_orders"), thoughtSignature: "c2ln2" }, { ...call("note", { text: "hi" }), futureField: 1 }),
  user({ functionResponse: { name: "list_orders", response: { orders: [] }, willContinue: false } }, { text: "go", partMetadata: { k: "v" } }),
];

const ANSWERS: Array<{ parts: unknown[]; texts?: string[] }> = [
  { parts: [{ text: "Done." }] },
  { parts: [{ text: "A" }, { text: "" }, { text: "B" }] },
  { parts: [{ text: "hmm", thought: true }, { text: "Refunded A-1001." }] },
  { parts: [{ ...call("refund", { order_id: "A-1001", qty: 1 }), thoughtSignature: "c2ln" }], texts: ['{"qty":1.0,"order_id":"A-1001"}'] },
  { parts: [call("refund", { amount: 12345678901234567000 }, "y2")], texts: ['{"amount":12345678901234567891}'] },
  { parts: [{ text: "Calling." }, call("list_orders"), call("get_order", { order_id: "A-1001" })] },
];

describe("Gemini template view: what a content reads as", () => {
  it("Should read a model turn as an assistant message: texts in content, calls in tool_calls as the model wrote their args, the rest in gemini_parts", () => {
    const { stored } = answerOf(
      [user({ text: "go" })],
      [{ text: "Sure." }, { ...call("refund", { order_id: "A-1", qty: 1 }, "z"), thoughtSignature: "s" }],
      ['{"order_id":"A-1","qty":1.0}'],
    );
    expect(view.toChat(stored)).toEqual({
      role: "assistant",
      content: ["Sure."],
      tool_calls: [{ id: "gemini_part_1", type: "function", function: { name: "refund", arguments: '{"order_id":"A-1","qty":1.0}' } }],
      gemini_parts: [
        { kind: "text", fields: {} },
        { kind: "call", fields: { thoughtSignature: "s" }, call: { id: "call_0" }, args: true },
      ],
    });
  });

  it("Should read a function response's result as its canonical JSON text in content, and a thought whole in gemini_parts", () => {
    const [, , results] = pathOf(RICH);
    expect(view.toChat(results)).toEqual({
      role: "user",
      content: ['{"cents":1999,"email":"ada@example.com","ok":true,"order_id":"A-1001"}'],
      gemini_parts: [{ kind: "response", fields: {}, response: { name: "get_order", id: "call_0" } }],
    });
    const thought = view.toChat(pathOf(RICH)[1]) as CanonicalMessage;
    expect(thought.content).toEqual(["Looking it up."]);
    expect((thought.gemini_parts as unknown[])[0]).toEqual({ kind: "thought", part: { text: "plan", thought: true, thoughtSignature: "c2ln" } });
  });
});

describe("Gemini template view: the round trip", () => {
  /** Every path message of RICH and every answer of ANSWERS after it, as stored, with its node hash and parent. */
  const messages = (): Array<{ m: unknown; hash: string; parent: string }> => {
    const key = keyOf(RICH);
    const path = key.path.map((s) => ({ m: JSON.parse(s.json) as unknown, hash: s.hash, parent: s.parent }));
    const answers = ANSWERS.map((a) => answerOf(RICH, a.parts, a.texts, { safetyRatings: [] }));
    return [...path, ...answers.map((a) => ({ m: a.stored, hash: a.hash, parent: key.key }))];
  };

  it("Should hash every stored path message and answer as the adapter does", () => {
    for (const { m, hash, parent } of messages()) {
      expect(childHash(parent, canonicalJson(view.hashForm(m)))).toBe(hash);
    }
  });

  it("Should give every stored message back from its view, argument texts and empty texts included (candidate metadata aside)", () => {
    for (const { m } of messages()) {
      const chat = chatViewOf(view, m);
      expect(chat).not.toBeNull();
      const { "muscle-mem:candidate": _metadata, ...message } = m as Record<string, unknown>;
      expect(apiMessageOf(view, chat as CanonicalMessage)).toEqual(message);
    }
  });

  it("Should give every stored message back through a template's decompose and compose", () => {
    for (const { m } of messages()) {
      const chat = chatViewOf(view, m) as CanonicalMessage;
      const { skeleton, leaves } = decompose(chat);
      const composed = compose(
        skeleton,
        leaves.map((l) => l.value),
      );
      expect(composed).toEqual(chat);
      const { "muscle-mem:candidate": _metadata, ...message } = m as Record<string, unknown>;
      expect(apiMessageOf(view, composed as CanonicalMessage)).toEqual(message);
    }
  });

  it("Should serve a rendered view with new values in its texts, results and args", () => {
    const { stored } = answerOf([user({ text: "go" })], [{ text: "Refund A-1001?" }, call("refund", { order_id: "A-1001" })], ['{"order_id":"A-1001"}']);
    const { skeleton, leaves } = decompose(chatViewOf(view, stored) as CanonicalMessage);
    const rendered = compose(
      skeleton,
      leaves.map((l) => (l.value === "A-1001" ? "D-4004" : l.value)),
    ) as CanonicalMessage;
    expect(apiMessageOf(view, rendered)).toEqual(model({ text: "Refund D-4004?" }, { functionCall: { name: "refund", argsJson: '{"order_id":"D-4004"}' } }));
  });
});

describe("Gemini template view: two contents the model reads otherwise never share a view", () => {
  /** Both views exist (every message here can be stored, so each has one) and differ. */
  const differ = (va: CanonicalMessage | null, vb: CanonicalMessage | null) => {
    expect(va).not.toBeNull();
    expect(vb).not.toBeNull();
    expect(canonicalJson(va)).not.toBe(canonicalJson(vb));
  };
  /** The last path messages of two conversations. */
  const apart = (a: unknown[], b: unknown[]) =>
    differ(...([a, b].map((contents) => chatViewOf(view, pathOf(contents).at(-1))) as [CanonicalMessage, CanonicalMessage]));
  /** Two answers after one user turn. */
  const answersApart = (a: { parts: unknown[]; texts?: string[] }, b: { parts: unknown[]; texts?: string[] }) =>
    differ(...([a, b].map((x) => chatViewOf(view, answerOf([user({ text: "go" })], x.parts, x.texts).stored)) as [CanonicalMessage, CanonicalMessage]));
  const go = { text: "go" };

  it("Should tell apart part order, part kinds, a text moved between parts, an empty text and extra fields", () => {
    apart([user({ text: "a" }, result("f", { x: 1 }))], [user(result("f", { x: 1 }), { text: "a" })]);
    apart([user({ text: "ab" }, { text: "c" })], [user({ text: "a" }, { text: "bc" })]);
    apart([user({ text: "a" }, { text: "" })], [user({ text: "a" })]);
    apart([user({ text: "a", partMetadata: { k: 1 } })], [user({ text: "a" })]);
    apart([user({ text: "a", thoughtSignature: "s1" })], [user({ text: "a", thoughtSignature: "s2" })]);
    apart([model({ text: "a", thought: true })], [model({ text: "a" })]);
    apart([model({ text: "a", thought: true })], [model({ text: "b", thought: true })]);
    apart([user({ text: "a" })], [model({ text: "a" })]);
  });

  it("Should tell apart call ids, call and result names and fields, results of one value written as two types, and a call without args from args {}", () => {
    const pair = (c: unknown, r: unknown) => [user(go), model(c), user(r)];
    apart(pair(call("f", { x: 1 }, "a"), result("f", { ok: 1 }, "a")), pair(call("f", { x: 1 }), result("f", { ok: 1 })));
    apart(pair(call("f", { x: 1 }), result("f", { ok: 1 })), pair(call("f", { x: 1 }), result("g", { ok: 1 })));
    apart(pair(call("f", { x: 1 }), result("f", { ok: 1 })), pair(call("f", { x: 1 }), result("f", { ok: "1" })));
    apart(pair(call("f", { x: 1 }), { functionResponse: { name: "f", response: {}, willContinue: true } }), pair(call("f", { x: 1 }), result("f", {})));
    apart([user(go), model(call("f", { x: 1 }))], [user(go), model(call("f", { x: 2 }))]);
    apart([user(go), model(call("f"))], [user(go), model(call("f", {}))]);
    apart([user(go), model({ ...call("f", { x: 1 }), thoughtSignature: "s" })], [user(go), model(call("f", { x: 1 }))]);
  });

  it("Should tell apart answers whose args the model wrote otherwise (1.0 and 1, key order), which the adapter hashes alike", () => {
    const [one, oneDot] = ['{"qty":1}', '{"qty":1.0}'].map((text) => ({ parts: [call("f", { qty: 1 })], texts: [text] }));
    expect(answerOf([user(go)], one.parts, one.texts).hash).toBe(answerOf([user(go)], oneDot.parts, oneDot.texts).hash);
    answersApart(one, oneDot);
    answersApart({ parts: [call("f", { a: 1, b: 2 })], texts: ['{"a":1,"b":2}'] }, { parts: [call("f", { a: 1, b: 2 })], texts: ['{"b":2,"a":1}'] });
    answersApart({ parts: [{ text: "A" }, { text: "B" }] }, { parts: [{ text: "AB" }] });
  });
});

describe("Gemini template view: what has no view, and what is no Gemini message", () => {
  it("Should give no view to what a node never stores", () => {
    for (const m of [
      null,
      "text",
      { role: "function", parts: [] },
      { role: "user", parts: [{ text: "a" }], extra: 1 },
      { role: "user", parts: [{ inlineData: { mimeType: "image/png", data: "AA" } }] },
      { role: "model", parts: [{ functionCall: { name: "f", args: { x: 1 } } }] },
      { role: "model", parts: [{ functionCall: { name: "f", argsJson: "{" } }] },
      { role: "user", parts: [{ functionResponse: { name: "f" } }] },
    ]) {
      expect(chatViewOf(view, m)).toBeNull();
    }
  });

  it("Should read no chat message as Gemini's, nor a view whose structure, call ids or counts were changed", () => {
    const stored = answerOf([user({ text: "go" })], [{ text: "a" }, call("f", { x: 1 })]).stored;
    const chat = chatViewOf(view, stored) as CanonicalMessage;
    const calls = chat.tool_calls ?? [];
    for (const bad of [
      { role: "assistant", content: "a" },
      { ...chat, role: "tool" },
      { ...chat, name: "bot" },
      { ...chat, content: "a" },
      { ...chat, content: ["a", "b"] },
      { ...chat, tool_calls: undefined },
      { ...chat, tool_calls: [{ ...calls[0], id: "gemini_part_0" }] },
      { ...chat, tool_calls: [{ ...calls[0], function: { name: "f", arguments: "{" } }] },
      { ...chat, tool_calls: [{ ...calls[0], extra: 1 }] },
      { ...chat, gemini_parts: [{ kind: "text", fields: {} }] },
      {
        ...chat,
        gemini_parts: [
          { kind: "image", fields: {} },
          { kind: "call", fields: {}, call: {}, args: true },
        ],
      },
    ]) {
      expect(apiMessageOf(view, bad as CanonicalMessage)).toBeNull();
    }
  });

  it("Should not serve a rendered result or args that read as another value (a number written 1.50 where canonical JSON has 1.5)", () => {
    const [, , results] = pathOf([user({ text: "go" }), model(call("f")), user(result("f", { amount: 1999 }))]);
    const { skeleton, leaves } = decompose(chatViewOf(view, results) as CanonicalMessage);
    const rendered = compose(
      skeleton,
      leaves.map((l) => (l.value === "1999" ? "1.50" : l.value)),
    ) as CanonicalMessage;
    expect(rendered.content).toEqual(['{"amount":1.50}']);
    expect(apiMessageOf(view, rendered)).toBeNull();
  });
});
