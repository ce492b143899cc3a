import { describe, expect, it } from "vitest";
import { payDesk } from "../../tools/eval-workflows/pay";
import { experiment, type Tally } from "../../tools/eval-workflows/run";
import { simulatedWorker } from "../../tools/eval-workflows/simulate";
import type { Workflow } from "../../tools/eval-workflows/types";

/**
 * The payments desk (tools/eval-workflows/pay.ts: IBANs, BICs, currencies, grouped amounts, fee tiers, FX rates,
 * value dates and a cut-off, calling codes, ZIPs and postcodes, MCCs, BINs, last 4s and accounts padded with
 * zeros, in tool results two and three deep) in memory, with 5 of each of its 12 traps, seeds 42, 1 and 7, both
 * modes. Before the code rule, seed 1's declared row paid a vendor at the Hawaiian ZIP 96813 (held) from a
 * learned template ranged over mainland ZIPs.
 */
describe("the payments desk in memory (template hunt 5)", () => {
  const all = (r: { warm: Tally; fresh: Tally; traps: Tally }) => [...r.warm.mismatches, ...r.fresh.mismatches, ...r.traps.mismatches];

  for (const seed of [42, 1, 7]) {
    for (const mode of ["learned", "declared"] as const) {
      it(`Should serve the payments desk (${mode}, seed ${seed}) with no wrong replay over 80 new runs and 5 of each trap`, { timeout: 60_000 }, async () => {
        const sim = simulatedWorker((body) => payDesk.script(body));
        const r = await experiment(payDesk as Workflow<unknown>, "wf-pay", sim.chat, { mode, warm: 8, fresh: 80, trapsPerKind: 5, seed, tag: "hunt5" });
        expect(all(r)).toEqual([]);
        // Templates serve it, traps included, so the decisions above were put to them.
        expect(r.fresh.served.learned).toBeGreaterThan(20);
        expect(r.traps.served.learned).toBeGreaterThan(0);
      });
    }
  }
});
