import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/core/canonical";
import type { CanonicalMessage } from "../../src/core/messages";
import { ambiguityOf } from "../../src/cache/templates/bindings";
import { abstractAnswer, declaredKeying } from "../../src/cache/templates/declared";

const user = (content: string): CanonicalMessage[] => [{ role: "user", content }];
const say = (content: string): CanonicalMessage => ({ role: "assistant", content });
const call = (args: unknown): CanonicalMessage => ({
  role: "assistant",
  tool_calls: [{ id: "call_0", type: "function", function: { name: "f", arguments: canonicalJson(args) } }],
});

describe("declared answers that hold something derived from a bound value", () => {
  it("Should not store a first name taken from a bound email", () => {
    const keyed = declaredKeying("t", "ns", "{}", user("Sign up ada@example.com"), { email: "ada@example.com" })!;
    expect(abstractAnswer(say("Hi Ada, welcome!"), keyed)).toBeNull();
    expect(abstractAnswer(call({ first_name: "ada", to: "ada@example.com" }), keyed)).toBeNull();
  });

  it("Should not store a slug or a run-together form of a bound name", () => {
    const keyed = declaredKeying("t", "ns", "{}", user("Create a page for Ada Lovelace"), { name: "Ada Lovelace" })!;
    expect(abstractAnswer(call({ slug: "ada-lovelace", title: "Ada Lovelace" }), keyed)).toBeNull();
    expect(abstractAnswer(say("Page adalovelace is live."), keyed)).toBeNull();
    expect(abstractAnswer(say("Page LOVELACE is live."), keyed)).toBeNull();
  });

  it("Should not store a digit run of a bound id that also stands alone in the answer", () => {
    // "1" is in the request (page 1), so only its being a part of the bound id can refuse it.
    const keyed = declaredKeying("t", "ns", "{}", user("Find order A-1, page 1"), { order_id: "A-1" })!;
    expect(abstractAnswer(say("Order A-1: 1 result."), keyed)).toBeNull();
  });

  it("Should still store answers that only copy bound values whole", () => {
    const keyed = declaredKeying("t", "ns", "{}", user("Sign up Ada Lovelace, ada.lovelace12@example.com, order A-1042"), {
      first: "Ada",
      last: "Lovelace",
      email: "ada.lovelace12@example.com",
      order_id: "A-1042",
    })!;
    expect(abstractAnswer(say("Welcome Ada Lovelace: ada.lovelace12@example.com, order A-1042, a refund."), keyed)?.content).toBe(
      "Welcome {{first}} {{last}}: {{email}}, order {{order_id}}, a refund.",
    );
  });

  it("Should not store an answer that names a variable the request never contained", () => {
    const keyed = declaredKeying("t", "ns", "{}", user("Refund order A-1042"), { order_id: "A-1042", code: "XK-77" })!;
    expect(abstractAnswer(say("Code XK-77 applied to A-1042."), keyed)).toBeNull();
  });
});

describe("bindings too short or too common to be unambiguous", () => {
  it.each([["1"], ["42"], ["Jo"], ["999"], ["yes"], ["The"], ["none"], ["true"], ["May"]])("Should refuse %s and key the request concretely", (value) => {
    expect(ambiguityOf(value)).not.toBeNull();
    expect(declaredKeying("t", "ns", "{}", user(`id ${value}: 1 result`), { id: value, name: "Ada Lovelace" })).toBeNull();
  });

  it.each([["Ada"], ["A-1"], ["1999"], ["ada@example.com"], ["Lovelace"]])("Should accept %s", (value) => {
    expect(ambiguityOf(value)).toBeNull();
  });
});
