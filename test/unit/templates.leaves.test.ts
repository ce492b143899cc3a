import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compose, decompose } from "../../src/cache/templates/leaves";
import { shapeOf, slotTypeOf } from "../../src/cache/templates/slot-types";
import { canonicalMessageArb } from "./templates.support";

describe("decompose / compose", () => {
  it("Should give every message back exactly from its skeleton and leaves", () => {
    fc.assert(
      fc.property(canonicalMessageArb, (message) => {
        const { skeleton, leaves } = decompose(message);
        expect(
          compose(
            skeleton,
            leaves.map((l) => l.value),
          ),
        ).toEqual(message);
      }),
      { numRuns: 500 },
    );
  });

  it("Should split text into whole tokens: ids, emails and decimals stay one leaf", () => {
    const { leaves } = decompose({ role: "user", content: "Refund A-1 (19.99) to ada@example.com, thanks Ada." });
    expect(leaves.map((l) => l.value)).toEqual(["Refund", "A-1", "19.99", "to", "ada@example.com", "thanks", "Ada"]);
  });

  it("Should take JSON string and number leaves from canonical arguments, keys staying structural", () => {
    const message = {
      role: "assistant",
      tool_calls: [{ id: "call_0", type: "function" as const, function: { name: "refund", arguments: '{"amount":1999,"note":"for Ada","order_id":"A-1"}' } }],
    };
    const { skeleton, leaves } = decompose(message);
    expect(leaves).toEqual([
      { value: "1999", kind: "number" },
      { value: "for", kind: "text" },
      { value: "Ada", kind: "text" },
      { value: "A-1", kind: "text" },
    ]);
    expect(compose(skeleton, ["2450", "for", "Bob", "B-7"])?.tool_calls?.[0].function.arguments).toBe('{"amount":2450,"note":"for Bob","order_id":"B-7"}');
  });

  it("Should refuse values that do not fit: a non-number in a JSON number, a wrong count, broken raw JSON", () => {
    const json = decompose({ role: "assistant", tool_calls: [{ id: "call_0", type: "function", function: { name: "f", arguments: '{"n":1}' } }] });
    expect(compose(json.skeleton, ["A-1"])).toBeNull();
    expect(compose(json.skeleton, ["007"])).toBeNull();
    expect(compose(json.skeleton, ["1", "2"])).toBeNull();
    const raw = decompose({ role: "assistant", tool_calls: [{ id: "call_0", type: "function", function: { name: "f", arguments: '{"n": 1}' } }] });
    expect(compose(raw.skeleton, ["n", "007"])).toBeNull();
    expect(compose(raw.skeleton, ["n", "42"])?.tool_calls?.[0].function.arguments).toBe('{"n": 42}');
  });
});

describe("slot types", () => {
  it("Should type identities and keep categorical words apart", () => {
    expect(slotTypeOf("A-1042")).toBe("identifier");
    expect(slotTypeOf("ada@example.com")).toBe("email");
    expect(slotTypeOf("19.99")).toBe("number");
    expect(slotTypeOf("2024-05-01")).toBe("date");
    expect(slotTypeOf("Ada")).toBe("name");
    expect(slotTypeOf("delivered")).toBe("word");
    expect(slotTypeOf("DELIVERED")).toBe("word");
    expect(shapeOf("A-1042")).toBe(shapeOf("B-7"));
    expect(shapeOf("N/A")).not.toBe(shapeOf("B-7"));
  });
});
