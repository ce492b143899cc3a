import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/core/canonical";
import { chatViewOf } from "../../src/cache/templates/view";
import { mutationsOf, rawOf, type Json } from "./key-fuzz.support";
import { answered, keyed, pathOf, view } from "./template-view.anthropic.support";

/**
 * The Anthropic view's safety: two messages that differ in anything the model reads (or anything a hit serves)
 * never share a view. Each pair below differs in one field; the fuzzer then changes every field of a
 * conversation and of an answer, one at a time.
 */

const viewJson = (message: unknown): string | null => {
  const chat = chatViewOf(view, message);
  return chat === null ? null : canonicalJson(chat);
};

/** Both messages have a view, and the views differ. */
function expectApart(a: unknown, b: unknown): void {
  const [va, vb] = [viewJson(a), viewJson(b)];
  expect(va).not.toBeNull();
  expect(vb).not.toBeNull();
  expect(va).not.toBe(vb);
}

const ask = { role: "user", content: "Refund A-1." };
const call = (id: string, input: Json = { order_id: "A-1" }) => ({ type: "tool_use", id, name: "get_order", input });
/** The last path message of a conversation, as its node stores it. */
const lastOf = (messages: unknown[]): unknown => pathOf(keyed(messages)).at(-1);
/** The stored answer for the model's content after `ask`. */
const answerOf = (content: unknown[], texts: ReadonlyArray<string | undefined> = []) => answered(keyed([ask]), content, texts).message;
/** A user turn answering two calls, `results` its blocks. */
const results = (...blocks: unknown[]) => lastOf([ask, { role: "assistant", content: [call("a"), call("b")] }, { role: "user", content: blocks }]);
const result = (id: string, texts: string[], extra: Record<string, unknown> = {}) => ({
  type: "tool_result",
  tool_use_id: id,
  content: texts.map((text) => ({ type: "text", text })),
  ...extra,
});
const text = (t: string, extra: Record<string, unknown> = {}) => ({ type: "text", text: t, ...extra });

describe("two Anthropic messages that differ in one field never share a view", () => {
  it("Should keep block order apart (text then call, call then text)", () => {
    expectApart(answerOf([text("On it."), call("m")]), answerOf([call("m"), text("On it.")]));
  });

  it("Should keep block types apart (a text, a result's text, a thinking block)", () => {
    expectApart(results(result("a", ["A-1"]), result("b", ["x"])), results(result("a", []), result("b", ["x"]), text("A-1")));
    expectApart(answerOf([text("Refund A-1.")]), answerOf([{ type: "thinking", thinking: "Refund A-1.", signature: "s" }]));
  });

  it("Should keep ids apart (which call a result answers)", () => {
    expectApart(results(result("a", ["ok"]), result("b", ["lost"])), results(result("b", ["ok"]), result("a", ["lost"])));
  });

  it("Should keep is_error apart", () => {
    expectApart(results(result("a", ["lost"], { is_error: true })), results(result("a", ["lost"])));
  });

  it("Should keep extra and unknown fields apart, on a block, a result and a message", () => {
    expectApart(lastOf([{ role: "user", content: [text("A-1", { citations: [{ type: "x" }] })] }]), lastOf([{ role: "user", content: [text("A-1")] }]));
    expectApart(results(result("a", ["ok"], { fuzz: 1 })), results(result("a", ["ok"])));
    expectApart(lastOf([{ role: "user", content: "A-1", priority: "high" }]), lastOf([{ role: "user", content: "A-1" }]));
    expectApart(answerOf([text("A-1", { citations: null })]), answerOf([text("A-1")]));
  });

  it("Should keep thinking and signatures apart, and redacted data", () => {
    const thinking = (t: string, s: string) => answerOf([{ type: "thinking", thinking: t, signature: s }, text("ok")]);
    expectApart(thinking("Refund A-1.", "s1"), thinking("Refund B-2.", "s1"));
    expectApart(thinking("Refund A-1.", "s1"), thinking("Refund A-1.", "s2"));
    expectApart(answerOf([{ type: "redacted_thinking", data: "a" }]), answerOf([{ type: "redacted_thinking", data: "b" }]));
  });

  it("Should keep roles apart (a user turn, a mid-conversation system turn)", () => {
    expectApart(
      lastOf([ask, { role: "assistant", content: "ok" }, { role: "user", content: "Be brief." }]),
      lastOf([ask, { role: "assistant", content: "ok" }, { role: "system", content: "Be brief." }]),
    );
  });

  it("Should keep a text moved between two blocks apart, in an answer and in a result", () => {
    expectApart(answerOf([text("Refund A-"), text("1 now.")]), answerOf([text("Refund A-1"), text(" now.")]));
    expectApart(results(result("a", ["A-", "1"])), results(result("a", ["A-1"])));
    expectApart(results(result("a", ["A-1"]), result("b", [])), results(result("a", []), result("b", ["A-1"])));
  });

  it("Should keep an empty text block of an answer apart from none", () => {
    expectApart(answerOf([text(""), call("m")]), answerOf([call("m")]));
  });

  it("Should keep a number written 1.0 apart from 1 where the answer keeps the text, and the caller as stored", () => {
    const input = { order_id: "A-1", qty: 1 };
    expectApart(answerOf([call("m", input)], ['{"order_id":"A-1","qty":1.0}']), answerOf([call("m", input)], ['{"order_id":"A-1","qty":1}']));
    expectApart(answerOf([call("m", input)], ['{"qty":1,"order_id":"A-1"}']), answerOf([call("m", input)]));
    expectApart(answerOf([{ ...call("m"), caller: { type: "direct" } }]), answerOf([call("m")]));
  });
});

/** A conversation with every block type, and an answer with every block a node stores. */
const BASE: Json = {
  body: {
    messages: [
      { role: "user", content: [text("Refund A-1 and B-2."), text("Email ada@example.com.")] },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "Two.", signature: "sig" },
          text("Looking."),
          call("toolu_a", { order_id: "A-1", qty: 2 }),
          call("toolu_b", { order_id: "B-2" }),
          { type: "redacted_thinking", data: "opaque" },
        ],
      },
      { role: "user", content: [result("toolu_b", ["lost"], { is_error: true }), result("toolu_a", ["A-1", "delivered"]), text("Go.")] },
    ],
  },
};
const ANSWER: Json = {
  content: [
    { type: "thinking", thinking: "Refund.", signature: "sig2" },
    text("Refunding A-1.", { citations: null }),
    { type: "tool_use", id: "toolu_m", name: "refund", input: { order_id: "A-1", qty: 2, note: "late" }, caller: { type: "direct" } },
    text(""),
  ],
};
const ANSWER_TEXT = '{"order_id": "A-1", "qty": 2.0, "note": "late"}';

describe("the Anthropic view under the key fuzzer", () => {
  for (const seed of [1, 2, 3]) {
    it(`Should view every message a changed conversation keys, and never a changed message as the base's (seed ${seed})`, () => {
      const base = pathOf(keyed((BASE as { body: { messages: unknown[] } }).body.messages));
      let compared = 0;
      for (const mutation of mutationsOf(BASE, seed)) {
        const body = (mutation.body as { body: { messages?: unknown } }).body;
        let messages: unknown[];
        try {
          messages = pathOf(keyed(body.messages as unknown[], {}, rawOf(mutation.body)));
        } catch {
          continue; // a bypass or a 400: no node, no view
        }
        for (const [i, message] of messages.entries()) {
          const label = `${mutation.label} at /${mutation.path.join("/")} (message ${i})`;
          expect(viewJson(message), label).not.toBeNull();
          if (i >= base.length || canonicalJson(message) === canonicalJson(base[i])) continue;
          compared++;
          expect(viewJson(message), label).not.toBe(viewJson(base[i]));
        }
      }
      expect(compared).toBeGreaterThan(50);
    });

    it(`Should view every answer a changed answer records, and never a changed stored answer as the base's (seed ${seed})`, () => {
      const key = keyed([ask]);
      const record = (content: unknown) => {
        if (!Array.isArray(content)) return null;
        try {
          return answered(key, content, [ANSWER_TEXT]).message;
        } catch {
          return null; // not recordable
        }
      };
      const base = record((ANSWER as { content: unknown }).content);
      let compared = 0;
      for (const mutation of mutationsOf(ANSWER, seed)) {
        const stored = record((mutation.body as { content?: unknown }).content);
        if (stored === null) continue;
        const label = `${mutation.label} at /${mutation.path.join("/")}`;
        expect(viewJson(stored), label).not.toBeNull();
        if (canonicalJson(stored) === canonicalJson(base)) continue;
        compared++;
        expect(viewJson(stored), label).not.toBe(viewJson(base));
      }
      expect(compared).toBeGreaterThan(20);
    });
  }
});
