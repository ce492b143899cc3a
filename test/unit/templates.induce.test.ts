import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/core/canonical";
import { walk } from "../../src/core/hash";
import type { CanonicalMessage } from "../../src/core/messages";
import { weigh } from "../../src/cache/templates/evidence";
import { induce, type LearnedTemplate, type Trajectory } from "../../src/cache/templates/induce";
import { compose, decompose } from "../../src/cache/templates/leaves";
import { bind, isConfirmed, lookupKeys, rejectReason, renderAnswer, skeletonDigests } from "../../src/cache/templates/learned";

const ROOT = "root";
const meta = { finishReason: "tool_calls", promptTokens: 10, completionTokens: 5, latencyMs: 100 };

/** A refund-desk trajectory at its third request: user, get_order, the order. */
function refund(c: { id: string; name: string; status: string; cents: number }, answer?: CanonicalMessage, greet = false): Trajectory {
  const messages: CanonicalMessage[] = [
    { role: "system", content: "Refund desk. Limit 50000 cents." },
    { role: "user", content: greet ? `Hi, this is ${c.name}. Please refund order ${c.id}.` : `Please refund order ${c.id}.` },
    { role: "assistant", tool_calls: [{ id: "call_0", type: "function", function: { name: "get_order", arguments: canonicalJson({ order_id: c.id }) } }] },
    { role: "tool", tool_call_id: "call_0", content: JSON.stringify({ order_id: c.id, status: c.status, amount_cents: c.cents }) },
  ];
  const truth: CanonicalMessage =
    c.status === "delivered" && c.cents <= 50_000
      ? {
          role: "assistant",
          tool_calls: [{ id: "call_1", type: "function", function: { name: "refund", arguments: JSON.stringify({ order_id: c.id, amount_cents: c.cents }) } }],
        }
      : { role: "assistant", tool_calls: [{ id: "call_1", type: "function", function: { name: "escalate", arguments: JSON.stringify({ order_id: c.id }) } }] };
  return { root: ROOT, hashes: walk(ROOT, messages).map((s) => s.hash), messages, answer: answer ?? truth, meta };
}

/** Serves a request from a template the way the Worker does, or null. */
function serve(t: LearnedTemplate, request: Trajectory, k = 3): CanonicalMessage | null {
  const parts = request.messages.map(decompose);
  const keys = lookupKeys(ROOT, request.hashes, skeletonDigests(parts)).map((x) => x.key);
  if (!keys.includes(t.lookupKey) || !isConfirmed(t.state, k)) return null;
  const binding = bind(t.pattern, parts.slice(t.pattern.anchorDepth), t.state.slots.length);
  if (!binding || rejectReason(t.state.slots, binding)) return null;
  return renderAnswer(t.pattern, binding.values);
}

function confirmed(...cases: Array<Parameters<typeof refund>[0]>): LearnedTemplate {
  const t = induce(refund(cases[0]), refund(cases[1]))!;
  for (const c of cases.slice(2)) t.state = weigh(t, refund(c)).state;
  return t;
}

describe("induce", () => {
  const ada = { id: "A-1001", name: "Ada", status: "delivered", cents: 1999 };
  const bob = { id: "B-2002", name: "Bob", status: "delivered", cents: 4500 };
  const cy = { id: "C-3003", name: "Cyd", status: "delivered", cents: 3000 };

  it("Should generalise two siblings into slots the answer copies, anchored at their deepest common node", () => {
    const t = induce(refund(ada), refund(bob))!;
    expect(t.pattern.anchorDepth).toBe(1);
    expect(t.state.slots.map((s) => [s.type, s.copied])).toEqual([
      ["identifier", true],
      ["number", true],
    ]);
    expect(t.state.slots[1]).toMatchObject({ min: "1999", max: "4500" });
  });

  it("Should not generalise a name that no answer on the path copies (it may be what the model decides on)", () => {
    expect(induce(refund(ada, undefined, true), refund(bob, undefined, true))).toBeNull();
    expect(induce(refund(ada, undefined, true), refund({ ...bob, name: "Ada" }, undefined, true))).not.toBeNull();
  });

  it("Should not generalise categorical words, derivations no simple function explains, or answers that decide differently", () => {
    expect(induce(refund(ada), refund({ ...bob, status: "shipped" }))).toBeNull();
    // Rounded to whole euros: no function of transforms.ts gives it, so it is a miss, never a guess.
    const rounded = (c: typeof ada) => ({ role: "assistant", content: `Refunding ${Math.round(c.cents / 100)} EUR` });
    expect(induce(refund(ada, rounded(ada)), refund(bob, rounded(bob)))).toBeNull();
    // Cents written as units with two decimals is one simple function: learned as such, never as a copy.
    const derived = (c: typeof ada) => ({ role: "assistant", content: `Refunding ${(c.cents / 100).toFixed(2)} EUR` });
    expect(induce(refund(ada, derived(ada)), refund(bob, derived(bob)))?.pattern.answer.refs).toContainEqual({ slot: 1, fn: "cents" });
    expect(induce(refund(ada), refund({ ...bob, cents: 90_000 }))).toBeNull();
  });

  it("Should serve only after k distinct bindings, inside the range seen, for shapes seen", () => {
    expect(serve(induce(refund(ada), refund(bob))!, refund({ ...cy, cents: 2500 }))).toBeNull();
    const t = confirmed(ada, bob, cy);
    const fresh = { id: "D-4004", name: "Dee", status: "delivered", cents: 2222 };
    expect(serve(t, refund(fresh))).toEqual(refund(fresh).answer);
    expect(serve(t, refund({ ...fresh, cents: 45_000 }))).toBeNull();
    expect(serve(t, refund({ ...fresh, cents: 90_000 }))).toBeNull();
    expect(serve(t, refund({ ...fresh, status: "lost" }))).toBeNull();
    expect(serve(t, refund({ ...fresh, id: "unknown" }))).toBeNull();
  });

  it("Should refute a template the model contradicts inside its range, and fence one it contradicts outside", () => {
    const t = confirmed(ada, bob, cy);
    const other: CanonicalMessage = { role: "assistant", content: "I need a human." };
    expect(weigh(t, refund({ ...cy, id: "E-5005", name: "Eve", cents: 2000 }, other)).outcome).toBe("refuted");
    const fenced = weigh(t, refund({ ...cy, id: "E-5005", name: "Eve", cents: 60_000 }));
    expect(fenced.outcome).toBe("fenced");
    expect(fenced.state.slots[1].fenceHigh).toBe("60000");
    // Growing the range up to the fence is a contradiction: the template is dropped.
    expect(weigh({ ...t, state: fenced.state }, refund({ ...cy, id: "F-6006", name: "Fay", cents: 60_000 })).outcome).not.toBe("confirmed");
  });

  it("Should reproduce both original trajectories exactly when rendered with the bindings it was induced from", () => {
    const word = fc.constantFrom("Ada", "Bob", "Cyd", "Dee", "Eve", "Fay");
    const id = fc.integer({ min: 1000, max: 99999 }).map((n) => `A-${n}`);
    const cents = fc.integer({ min: 100, max: 50_000 });
    const caseArb = fc.record({ id, name: word, status: fc.constant("delivered"), cents });
    fc.assert(
      fc.property(caseArb, caseArb, (a, b) => {
        const ta = refund(a);
        const tb = refund(b);
        const t = induce(ta, tb);
        fc.pre(t !== null);
        for (const [traj, side] of [
          [ta, 0],
          [tb, 1],
        ] as const) {
          const values = t!.state.slots.map((s) => s.values[side]);
          t!.pattern.suffix.forEach((m, i) => {
            const leaves = m.refs.map((r) => (typeof r === "number" ? values[r] : (r as string)));
            expect(compose(m.skeleton, leaves)).toEqual(traj.messages[t!.pattern.anchorDepth + i]);
          });
          expect(renderAnswer(t!.pattern, values)).toEqual(traj.answer);
        }
      }),
      { numRuns: 300 },
    );
  });
});
