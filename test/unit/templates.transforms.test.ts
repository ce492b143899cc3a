import { describe, expect, it } from "vitest";
import { walk } from "../../src/core/hash";
import type { CanonicalMessage } from "../../src/core/messages";
import { weigh } from "../../src/cache/templates/evidence";
import { induce, type LearnedTemplate, type Trajectory } from "../../src/cache/templates/induce";
import { isConfirmed } from "../../src/cache/templates/learned";
import { decompose } from "../../src/cache/templates/leaves";
import { explainLearned } from "../../src/cache/templates/serve";
import { applyTransform, explainDerived } from "../../src/cache/templates/transforms";

const ROOT = "root";
const meta = { finishReason: "stop", promptTokens: 10, completionTokens: 5, latencyMs: 50 };

/** An order lookup in cents and the model's answer, written by `say` (a function of the amount). */
function order(id: string, cents: number, say: (id: string, cents: number) => string): Trajectory {
  const messages: CanonicalMessage[] = [
    { role: "system", content: "Report the order." },
    { role: "user", content: `Order ${id} costs ${cents} cents.` },
    { role: "assistant", content: `Looking at ${id} of ${cents} cents.` },
    { role: "user", content: "How much is that?" },
  ];
  return { root: ROOT, hashes: walk(ROOT, messages).map((s) => s.hash), messages, answer: { role: "assistant", content: say(id, cents) }, meta };
}

const usd = (id: string, cents: number) => `Order ${id}: ${(cents / 100).toFixed(2)} USD.`;

function served(t: LearnedTemplate, r: Trajectory): CanonicalMessage | null {
  const out = explainLearned([t], r.messages.map(decompose), 3);
  return "message" in out ? out.message : null;
}

describe("transforms learned from evidence", () => {
  it("Should compute each function exactly, and apply none that does not change the value", () => {
    expect(applyTransform("cents", "1500")).toBe("15.00");
    expect(applyTransform("cents", "5")).toBe("0.05");
    expect(applyTransform("cents", "123456789012345")).toBe("1234567890123.45");
    expect(applyTransform("cents", "15.5")).toBeNull();
    expect(applyTransform("fixed2", "15")).toBe("15.00");
    expect(applyTransform("fixed2", "15.5")).toBe("15.50");
    expect(applyTransform("upper", "a-17")).toBe("A-17");
    expect(applyTransform("capital", "ada")).toBe("Ada");
    expect(applyTransform("lower", "abc")).toBeNull();
  });

  it("Should explain a leaf by one function of one slot, and refuse none or two explanations", () => {
    const slots = [
      { type: "number", values: ["1500", "2250"] },
      { type: "identifier", values: ["ab-1", "cd-2"] },
    ];
    expect(explainDerived(slots, "15.00", "22.50")).toEqual({ slot: 0, fn: "cents" });
    expect(explainDerived(slots, "AB-1", "CD-2")).toEqual({ slot: 1, fn: "upper" });
    // `A-1` from `a-1` is both upper-case and capitalised: two explanations are none.
    expect(explainDerived([{ type: "identifier", values: ["a-1", "b-2"] }], "A-1", "B-2")).toHaveProperty("reason");
    expect(explainDerived(slots, "16.00", "22.50")).toHaveProperty("reason");
    // `abc` and `ABC` in two slots: `ABC` could come from either.
    expect(
      explainDerived(
        [
          { type: "word", values: ["abc", "def"] },
          { type: "word", values: ["abc", "def"] },
        ],
        "ABC",
        "DEF",
      ),
    ).toHaveProperty("reason");
  });

  it("Should serve a derived amount for a new value only after 3 distinct bindings, inside the range seen", () => {
    const t = induce(order("A-1001", 1500, usd), order("A-2002", 2250, usd))!;
    expect(t.pattern.answer.refs).toContainEqual({ slot: 1, fn: "cents" });
    expect(isConfirmed(t.state, 3)).toBe(false);
    expect(served(t, order("A-3003", 1999, usd))).toBeNull();
    t.state = weigh(t, order("A-3003", 3000, usd)).state;
    expect(isConfirmed(t.state, 3)).toBe(true);
    expect(served(t, order("A-4004", 1999, usd))).toEqual({ role: "assistant", content: "Order A-4004: 19.99 USD." });
    expect(served(t, order("A-5005", 9999, usd))).toBeNull();
  });

  it("Should refute the template the first time the model writes the value another way", () => {
    const t = induce(order("A-1001", 1500, usd), order("A-2002", 2250, usd))!;
    t.state = weigh(t, order("A-3003", 3000, usd)).state;
    // The model rounds this one: the function was wrong, and the template never serves again.
    const rounded = (id: string, cents: number) => `Order ${id}: ${Math.round(cents / 100)}.00 USD.`;
    const outcome = weigh(t, order("A-4004", 1999, rounded));
    expect(outcome.outcome).toBe("refuted");
    expect(served({ ...t, state: outcome.state }, order("A-4004", 1999, usd))).toBeNull();
  });

  it("Should make no template of a derivation that is none of the simple functions (a doubled amount)", () => {
    const twice = (id: string, cents: number) => `Order ${id}: ${cents * 2} units.`;
    expect(induce(order("A-1001", 1500, twice), order("A-2002", 2250, twice))).toBeNull();
  });
});
