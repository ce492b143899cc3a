import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/core/canonical";
import type { Trajectory } from "../../src/cache/templates/induce";
import { caseArb, ruleArb, simulate, trajectoryOf, type Rule } from "./templates.stay-fixed.support";

/** Workflows whose verdict rests on a value the model never copies, with the id it does copy. */
const workflowArb = ruleArb.chain((rule) => fc.tuple(fc.constant(rule), fc.array(caseArb(rule), { minLength: 8, maxLength: 40 }), fc.boolean()));

describe("learned templates stay fixed where the model decides on a value it never copies", () => {
  it("Should serve no wrong answer for generated lookup-table, parity and set-membership workflows", { timeout: 120_000 }, () => {
    fc.assert(
      fc.property(workflowArb, ([rule, cases, lookup]) => {
        const result = simulate(cases.map((c) => trajectoryOf(rule, c, lookup)));
        expect(result.wrong).toBe(0);
      }),
      { numRuns: 200 },
    );
  });

  it("Should still serve where the answer only copies (the harness can serve: 0 wrong is not for want of serving)", () => {
    // A verdict that never changes is a copy-only workflow: the id is the only thing that varies.
    const constant: Rule = { kind: "set", members: ["Pending"] };
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1000, max: 99_999 }), { minLength: 8, maxLength: 20 }), fc.boolean(), (ids, lookup) => {
        const ts: Trajectory[] = [...new Set(ids)].map((n) => trajectoryOf(constant, { id: `A-${n}`, value: "Pending" }, lookup));
        fc.pre(ts.length >= 6);
        const result = simulate(ts);
        expect(result.wrong).toBe(0);
        expect(result.served).toBeGreaterThan(0);
      }),
      { numRuns: 50 },
    );
  });

  it("Should report a wrong replay when one happens: a number the answer copies and decides on by parity (the documented limit of ranges)", () => {
    // The answer copies the ticket, so it may vary inside the range seen; a rule that is not monotonic inside that
    // range is served wrong until the model contradicts the template (which then refutes it for good).
    const parity: Rule = { kind: "parity", modulus: 2 };
    const ts = ["12", "20", "16", "14", "13", "15"].map((value, i) => trajectoryOf(parity, { id: `A-${1000 + i}`, value }, false, true));
    expect(simulate(ts).wrong).toBeGreaterThan(0);
    // Not copied, the same numbers stay structural: nothing is served, nothing is wrong.
    expect(simulate(["12", "20", "16", "14", "13", "15"].map((value, i) => trajectoryOf(parity, { id: `A-${1000 + i}`, value }, false)))).toEqual({
      served: 0,
      wrong: 0,
    });
  });
});
