import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/core/canonical";
import type { CanonicalMessage } from "../../src/core/messages";
import { parseBindings } from "../../src/cache/templates/bindings";
import { abstractAnswer, declaredKeying, hashForm } from "../../src/cache/templates/declared";
import { hasPlaceholderLike, isWholeAt, renderMessage, substituteMessage, substituteText } from "../../src/cache/templates/placeholders";
import { canonicalMessageArb } from "./templates.support";

const call = (args: unknown): CanonicalMessage => ({
  role: "assistant",
  tool_calls: [{ id: "call_0", type: "function", function: { name: "refund", arguments: canonicalJson(args) } }],
});

describe("parseBindings", () => {
  it("Should accept a JSON object of non-empty strings", () => {
    expect(parseBindings('{"name":"Ada","order_id":"A-1"}')).toEqual({ ok: true, bindings: { name: "Ada", order_id: "A-1" } });
    expect(parseBindings(null)).toEqual({ ok: true, bindings: null });
  });

  it.each([
    ["not json", "{name"],
    ["an array", '["Ada"]'],
    ["a number value", '{"n":1}'],
    ["an empty value", '{"n":""}'],
    ["a bad name", '{"1n":"x"}'],
    ["a too long name", `{"${"a".repeat(65)}":"x"}`],
    ["a too long value", `{"n":"${"x".repeat(1025)}"}`],
    ["raw non-ASCII bytes", '{"name":"Zoë"}'],
    ["a control character", '{"name":"A\tB"}'],
    ["a lone surrogate", '{"name":"x\\ud83dy"}'],
  ])("Should reject %s", (_, header) => {
    expect(parseBindings(header).ok).toBe(false);
  });

  it("Should take any Unicode written as JSON escapes, and say how when it gets raw bytes", () => {
    expect(parseBindings('{"name":"Zo\\u00eb","emoji":"\\ud83d\\ude00"}')).toEqual({ ok: true, bindings: { name: "Zoë", emoji: "😀" } });
    const raw = parseBindings('{"name":"Zoë"}');
    expect(raw.ok === false && raw.message).toMatch(/ASCII.*\\u00eb/);
  });
});

describe("whole-token substitution", () => {
  it("Should replace whole values only, never inside a longer token", () => {
    const b = { order_id: "A-1", name: "Ada" };
    expect(substituteText("Refund A-1 for Ada.", b)).toBe("Refund {{order_id}} for {{name}}.");
    expect(substituteText("A-10, B-A-1, XA-1, Ada.Lovelace, Adam", b)).toBe("A-10, B-A-1, XA-1, Ada.Lovelace, Adam");
    expect(substituteText("Ada's order (A-1)", b)).toBe("{{name}}'s order ({{order_id}})");
    expect(isWholeAt("x A-1: ok", 2, 5)).toBe(true);
  });

  it("Should substitute JSON string leaves and mark bound JSON numbers", () => {
    const m = substituteMessage(call({ order_id: "A-1", amount: 1999, note: "for Ada" }), { order_id: "A-1", amount: "1999", name: "Ada" });
    expect(m.tool_calls?.[0].function.arguments).toBe('{"amount":"{{#amount}}","note":"for {{name}}","order_id":"{{order_id}}"}');
    const rendered = renderMessage(m, { order_id: 'B"7', amount: "2450", name: "Bob\n" });
    expect(JSON.parse(rendered?.tool_calls?.[0].function.arguments ?? "")).toEqual({ order_id: 'B"7', amount: 2450, note: "for Bob\n" });
  });

  it("Should miss when a placeholder is unbound or a number placeholder gets a non-number", () => {
    const m = substituteMessage(call({ amount: 1999 }), { amount: "1999" });
    expect(renderMessage(m, { amount: "lots" })).toBeNull();
    expect(renderMessage({ role: "assistant", content: "Hi {{name}}" }, {})).toBeNull();
  });

  // Declared trees key and store the hash form (canonical tool-call arguments).
  it("Should reproduce the original messages exactly when rendered with the bindings they were keyed with", () => {
    const bindingsArb = fc.dictionary(
      fc.constantFrom("name", "order_id", "amount", "email"),
      fc.constantFrom("Ada", "A-1", "1999", "ada@example.com", "19.99", "Bob", 'a "q"', "日本"),
      { minKeys: 1 },
    );
    fc.assert(
      fc.property(canonicalMessageArb.map(hashForm), bindingsArb, (message, bindings) => {
        fc.pre(!hasPlaceholderLike(message));
        const keyed = declaredKeying("t", "ns", "{}", [message], bindings);
        fc.pre(keyed !== null);
        expect(renderMessage(keyed!.messages[0], bindings)).toEqual(message);
      }),
      { numRuns: 500 },
    );
  });
});

describe("declared keying and answers", () => {
  const context: CanonicalMessage[] = [
    { role: "system", content: "Refund desk. Limit 500." },
    { role: "user", content: "Refund order A-1 for Ada, amount 1999" },
  ];
  const bindings = { order_id: "A-1", name: "Ada" };

  it("Should key concretely when values collide or the messages hold placeholder text", () => {
    expect(declaredKeying("t", "ns", "{}", context, { a: "Ada", b: "Ada" })).toBeNull();
    expect(declaredKeying("t", "ns", "{}", context, { a: "A-1", b: "A" })).toBeNull();
    expect(declaredKeying("t", "ns", "{}", [{ role: "user", content: "Hi {{name}}" }], bindings)).toBeNull();
  });

  it("Should put declared requests in a tree of their own that names the variables", () => {
    const keyed = declaredKeying("t", "ns", '{"model":"m"}', context, bindings)!;
    expect(JSON.parse(keyed.frameJson)).toEqual({ model: "m", "muscle-mem-variables": ["name", "order_id"] });
    expect(keyed.messages[1].content).toBe("Refund order {{order_id}} for {{name}}, amount 1999");
  });

  it("Should store an answer that only copies bound values and context", () => {
    const keyed = declaredKeying("t", "ns", "{}", context, bindings)!;
    expect(abstractAnswer(call({ order_id: "A-1", amount: 1999 }), keyed)?.tool_calls?.[0].function.arguments).toBe(
      '{"amount":1999,"order_id":"{{order_id}}"}',
    );
    expect(abstractAnswer({ role: "assistant", content: "Done, Ada." }, keyed)?.content).toBe("Done, {{name}}.");
  });

  it("Should not store an amount derived from a bound value, and store one derived from a value keyed as it is", () => {
    // 1999 bound: the next binding would need another amount, so `19.99` cannot be stored under {{amount}}.
    const bound = declaredKeying("t", "ns", "{}", context, { ...bindings, amount: "1999" })!;
    expect(abstractAnswer({ role: "assistant", content: "Refunded 19.99" }, bound)).toBeNull();
    // 1999 in the key as it is: every request at this node has it, so `19.99` (cents as units) is exact.
    const keyed = declaredKeying("t", "ns", "{}", context, bindings)!;
    expect(abstractAnswer({ role: "assistant", content: "Refunded 19.99" }, keyed)?.content).toBe("Refunded 19.99");
  });

  it.each([
    ["an amount no simple function of the request gives", { role: "assistant", content: "Refunded 25.99" }],
    ["a value inside a longer token", { role: "assistant", content: "See A-1-b" }],
    ["an upper-cased value", { role: "assistant", content: "Dear ADA" }],
    ["placeholder-like text", { role: "assistant", content: "Dear {{name}}" }],
  ])("Should not store %s", (_, answer) => {
    const keyed = declaredKeying("t", "ns", "{}", context, bindings)!;
    expect(abstractAnswer(answer as CanonicalMessage, keyed)).toBeNull();
  });
});
