import fc from "fast-check";
import { canonicalJson } from "../../src/core/canonical";
import type { CanonicalMessage } from "../../src/core/messages";

/** Words, ids, emails, numbers and punctuation: text shaped like real agent traffic. */
export const tokenish = fc.oneof(
  fc.constantFrom(
    "Ada",
    "Bob",
    "refund",
    "order",
    "A-1",
    "B-17",
    "ada@example.com",
    "1999",
    "19.99",
    "2024-05-01",
    "Ada.Lovelace",
    "A-10",
    "{{x}}",
    "é",
    "日本",
  ),
  fc.string({ maxLength: 6 }),
);
export const separator = fc.constantFrom(" ", ", ", ". ", "\n", "-", ".", '"', "\\", "#", "'s ", "", "/");
export const textish = fc.array(fc.tuple(tokenish, separator), { maxLength: 8 }).map((parts) => parts.map(([t, s]) => t + s).join(""));
export const anyText = fc.oneof(textish, fc.string(), fc.string({ unit: "grapheme" }));

/** Any JSON value, small: texts as anyText, numbers, booleans, null, arrays and objects. */
export const jsonish: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    anyText,
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    tie("array"),
    tie("object"),
  ),
  array: fc.array(tie("value"), { maxLength: 3 }),
  object: fc.dictionary(fc.string({ maxLength: 5 }), tie("value"), { maxKeys: 3 }),
})).value;

const args = fc.oneof(
  jsonish.map((v) => canonicalJson(v)),
  jsonish.map((v) => JSON.stringify(v, null, 1) ?? "null"),
  anyText,
);

/** Canonical messages of every role and field the cache stores. */
export const canonicalMessageArb: fc.Arbitrary<CanonicalMessage> = fc
  .record(
    {
      role: fc.constantFrom("system", "user", "assistant", "tool"),
      content: fc.oneof(anyText, fc.array(anyText, { minLength: 2, maxLength: 3 })),
      refusal: anyText,
      name: fc.constantFrom("ada", "bot"),
      tool_call_id: fc.constantFrom("call_0", "call_1"),
      tool_calls: fc.array(fc.record({ id: fc.constantFrom("call_0", "call_1"), name: fc.constantFrom("get_order", "refund"), args }), {
        minLength: 1,
        maxLength: 2,
      }),
    },
    { requiredKeys: ["role"] },
  )
  .map(({ tool_calls, ...rest }) => ({
    ...rest,
    ...(tool_calls ? { tool_calls: tool_calls.map((c) => ({ id: c.id, type: "function" as const, function: { name: c.name, arguments: c.args } })) } : {}),
  }));
