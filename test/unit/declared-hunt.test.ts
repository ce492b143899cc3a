import { describe, expect, it } from "vitest";
import type { CanonicalMessage } from "../../src/core/messages";
import { parseBindings, type Bindings } from "../../src/cache/templates/bindings";
import { abstractAnswer, bindingDigestOf, declaredKeying, type DeclaredKeying } from "../../src/cache/templates/declared";
import { renderMessage } from "../../src/cache/templates/placeholders";
import { ask, learnAll, served } from "./templates.serve.support";

/** Attacks on declared bindings (docs/templates.md, "Declared variables"): each held unless a fix is named. */

const frame = '{"model":"m"}';
const user = (content: string): CanonicalMessage => ({ role: "user", content });
const call = (args: string): CanonicalMessage => ({
  role: "assistant",
  tool_calls: [{ id: "call_0", type: "function", function: { name: "pay", arguments: args } }],
});
const keyed = (messages: CanonicalMessage[], bindings: Bindings): DeclaredKeying => {
  const keying = declaredKeying("t", "default", frame, messages, bindings);
  if (!keying) throw new Error("keyed concretely");
  return keying;
};
const parsed = (header: string): Bindings => {
  const result = parseBindings(header);
  if (!result.ok || !result.bindings) throw new Error("no bindings");
  return result.bindings;
};

describe("declared hunt: the bindings header", () => {
  it("Should key the same bindings sent with their names in another order alike", () => {
    const messages = [user("Refund order A-1001 for Ada Lovelace.")];
    const a = keyed(messages, parsed('{"name":"Ada Lovelace","order":"A-1001"}'));
    const b = keyed(messages, parsed('{"order":"A-1001","name":"Ada Lovelace"}'));
    expect([b.treeId, b.frameJson, b.messages]).toEqual([a.treeId, a.frameJson, a.messages]);
    expect(bindingDigestOf(b)).toBe(bindingDigestOf(a));
  });

  it("Should tell apart two bindings whose values differ only in case (a repeat is exact, case and all)", () => {
    const a = keyed([user("Hi, I'm Ada Lovelace.")], { name: "Ada Lovelace" });
    const b = keyed([user("Hi, I'm ADA LOVELACE.")], { name: "ADA LOVELACE" });
    expect(b.messages).toEqual(a.messages);
    expect(bindingDigestOf(b)).not.toBe(bindingDigestOf(a));
    // A value in the messages in another case than declared is not claimed: the request keys as its text.
    const c = keyed([user("Hi, I'm ada lovelace.")], { name: "Ada Lovelace" });
    expect(c.messages).not.toEqual(a.messages);
  });
});

describe("declared hunt: a bound value spelled otherwise in the model's answer is not stored", () => {
  it.each([
    ["a number with thousands separators", { amount: "12500" }, "Refund 12500 to Ada Lovelace.", "Refunded 12,500."],
    ["a number with a decimal part", { amount: "12500" }, "Refund 12500 to Ada Lovelace.", "Refunded 12500.00."],
    ["another case", { order: "A-1001" }, "Refund order A-1001.", "Refunded a-1001."],
    ["NFD of an NFC name", { name: "Zo\u00eb Kim" }, "I'm Zo\u00eb Kim.", "Hi Zoe\u0308 Kim."],
    ["surrounding whitespace dropped", { name: " Ada Lovelace " }, "Name: Ada Lovelace , please.", "Hi Ada Lovelace!"],
  ])("Should not store %s", (_, bindings, request, answer) => {
    const keying = declaredKeying("t", "default", frame, [user(request)], bindings);
    expect(keying && abstractAnswer({ role: "assistant", content: answer }, keying)).toBeNull();
  });
});

describe("declared hunt: a request's tool-call arguments with a number written otherwise (placeholders.ts keys them as text)", () => {
  it("Should key a request's arguments 1 and 1.0 apart, and a bound 1999 apart from 1999.0", () => {
    const history = (args: string) => [user("Pay Ada Lovelace."), call(args)];
    const a = keyed(history('{"times":1,"to":"Ada Lovelace"}'), { name: "Ada Lovelace" });
    const b = keyed(history('{"times":1.0,"to":"Ada Lovelace"}'), { name: "Ada Lovelace" });
    expect(b.messages).not.toEqual(a.messages);
    const c = keyed(history('{"amount":1999,"to":"Ada Lovelace"}'), { name: "Ada Lovelace", amount: "1999" });
    const d = keyed(history('{"amount":1999.0,"to":"Ada Lovelace"}'), { name: "Ada Lovelace", amount: "1999" });
    expect(d.messages).not.toEqual(c.messages);
  });
});

describe("declared hunt: bindings that collide with placeholder syntax", () => {
  it("Should key concretely a request whose prompt holds {{name}}-like text, and one whose value holds it", () => {
    expect(declaredKeying("t", "default", frame, [user("Template: {{name}} for Ada Lovelace")], { name: "Ada Lovelace" })).toBeNull();
    expect(declaredKeying("t", "default", frame, [user("I'm {{who}}x")], { name: "{{who}}x" })).toBeNull();
  });

  it("Should render a value holding placeholder text once, never as a placeholder of another variable", () => {
    const keying = keyed([user("I'm Ada Lovelace, order A-1001.")], { name: "Ada Lovelace", order: "A-1001" });
    const stored = abstractAnswer({ role: "assistant", content: "Done, Ada Lovelace: A-1001." }, keying);
    expect(stored?.content).toBe("Done, {{name}}: {{order}}.");
    expect(stored && renderMessage(stored, { name: "{{order}} Roe", order: "B-2002" })?.content).toBe("Done, {{order}} Roe: B-2002.");
  });
});

describe("declared hunt: a learned slot value written otherwise carries the request's own text (an attack that held)", () => {
  const refund = (amount: string) => ask("Refund desk.", `Refund ${amount} dollars on order A-1001`, `Refunded ${amount} dollars on order A-1001.`);
  it.each(["150.0", "150.00", "1.5e2", "0150", "150"])("Should serve %s only with its own spelling, or miss", (amount) => {
    const out = served(learnAll([refund("100"), refund("300"), refund("200")]), refund(amount));
    expect(out === null || out.content === `Refunded ${amount} dollars on order A-1001.`).toBe(true);
  });

  it("Should serve the plain number from the template those refunds taught (the template is learned at all)", () => {
    expect(served(learnAll([refund("100"), refund("300"), refund("200")]), refund("150"))?.content).toBe("Refunded 150 dollars on order A-1001.");
  });
});
