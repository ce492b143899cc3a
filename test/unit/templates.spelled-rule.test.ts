import { describe, expect, it } from "vitest";
import { parseJsonText } from "../../src/core/body";
import { canonicalJson } from "../../src/core/canonical";
import { chatRequest } from "../../src/core/messages";
import { hashForm } from "../../src/cache/templates/declared";
import { hashReadMore, readsSpellings } from "../../src/cache/templates/spelled";
import { planTemplates } from "../../src/engine/templates";
import { keyRequest, type RequestKey } from "../../src/providers/chat/key";

/**
 * One rule for chat and the template views (src/cache/templates/spelled.ts): a request whose step hashes read a
 * number's spelling its stored message does not hold is never read by learned templates. Chat knows it from
 * `key.numbers`; a view's chat key from the hashes (chatKeyOf). Both must say the same of a chat request.
 */
const settings = { induction: true, minBindings: 3, declaredMinBindings: 2, maxTried: 32 };

function keyOf(raw: string): RequestKey {
  const { body } = parseJsonText(raw, chatRequest);
  const keyed = keyRequest(body, "t", "default", 900_000, { raw });
  if (!keyed.ok) throw new Error("not keyed");
  return keyed.key;
}

const stepsReadingMore = (key: RequestKey) => key.path.flatMap((step, i) => (hashReadMore(step, canonicalJson(hashForm(step.message))) ? [i] : []));

/** A tool conversation with `amount` on the tool message, `index` on the echoed call and `weight` on the user message, as given. */
const raw = (amount: string, index = "0", weight = "1") =>
  `{"model":"m","messages":[{"role":"user","content":"Refund order A-1","weight":${weight}},` +
  `{"role":"assistant","content":null,"tool_calls":[{"index":${index},"id":"c1","type":"function","function":{"name":"get_order","arguments":"{\\"id\\": 1.0}"}}]},` +
  `{"role":"tool","tool_call_id":"c1","content":"{\\"amount\\": 42.0}","amount":${amount}}]}`;

describe("learned templates and numbers sent spelled otherwise: one rule", () => {
  it.each([
    ["42", "0", "1", []],
    ["42.0", "0", "1", [2]],
    ["1e2", "0", "1", [2]],
    ["42", "0.0", "1", [1]],
    ["42", "0", "1.00", [0]],
    ["4.20e1", "0", "10E-1", [0, 2]],
  ])("Should read amount %s, index %s, weight %s as spelled at steps %j, by key.numbers and by the hashes alike", (amount, index, weight, steps) => {
    const key = keyOf(raw(amount, index, weight));
    // Spellings inside strings (arguments, tool content) are text the hash and the stored message both hold.
    expect(stepsReadingMore(key)).toEqual(steps);
    expect(readsSpellings(key)).toBe(steps.length > 0);
    expect([...(key.numbers?.keys() ?? [])]).toEqual(steps);
  });

  it("Should plan no learning and no learned lookup for a spelled request, concrete or declared, and both for a plain one", () => {
    for (const bindings of [null, { order_id: "A-1" }]) {
      expect(planTemplates(keyOf(raw("42")), bindings, new Headers(), settings).induction).toBe(true);
      const spelled = planTemplates(keyOf(raw("42.0")), bindings, new Headers(), settings);
      expect(spelled.key.declared !== undefined).toBe(bindings !== null);
      expect(spelled.induction).toBe(false);
      expect(readsSpellings(spelled.key)).toBe(true);
    }
  });
});
