import { describe, expect, it } from "vitest";
import { experiment, WORKFLOWS } from "../../tools/eval-workflows/run";
import { simulatedWorker } from "../../tools/eval-workflows/simulate";

/**
 * The template evaluation in memory (tools/eval-workflows/simulate.ts: the
 * Worker's template rules without the runtime), on every workflow (tools/eval-workflows/run.ts WORKFLOWS): a
 * wrong replay in any row fails here, in seconds. test/worker/templates.eval.test.ts
 * runs a smaller form through the Worker itself.
 */
describe("template evaluation (in memory)", () => {
  const served = (t: { inRange: { served: number; steps: number } }) => t.inRange.served / Math.max(1, t.inRange.steps);
  for (const [prefix, wf] of Object.entries(WORKFLOWS)) {
    for (const mode of ["learned", "declared"] as const) {
      it(`Should serve ${wf.name} (${mode}) with no wrong replay, traps included`, { timeout: 60_000 }, async () => {
        const sim = simulatedWorker((body) => wf.script(body));
        const r = await experiment(wf, prefix, sim.chat, { mode, warm: 8, fresh: 80, trapsPerKind: 2, seed: 42, tag: "sim" });
        expect([...r.warm.mismatches, ...r.fresh.mismatches, ...r.traps.mismatches]).toEqual([]);
        expect(r.traps.runs).toBe(2 * wf.traps.length);
        // Every value the refund-mail desk and the intake vary besides their closed-class words is copied: in range, templates serve.
        if (prefix === "wf-rmail" || prefix === "wf-intake") expect(served(r.fresh)).toBeGreaterThanOrEqual(0.75);
        // The screening desk decides on every value it does not copy: nothing learned may serve it.
        if (prefix === "wf-screen") expect(r.fresh.served.learned + r.traps.served.learned).toBe(0);
        // The booking desk's names are tied to no email: learned templates keep them (and the places) structural.
        if (prefix === "wf-book" && mode === "learned") expect(r.fresh.served.learned).toBe(0);
        // The ops desk's package URLs, hostnames and ports vary: learned templates serve it, its traps put to them.
        if (prefix === "wf-ops" && mode === "learned") expect(r.fresh.served.learned).toBeGreaterThan(0);
        // The payments desk's codes (MCCs, ZIPs, BINs, calling codes) serve only confirmed values: templates still serve it.
        if (prefix === "wf-pay") expect(r.fresh.served.learned).toBeGreaterThan(0);
      });
    }
  }
});
