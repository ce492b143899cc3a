import { describe, expect, it } from "vitest";
import { opsDesk } from "../../tools/eval-workflows/ops";
import { experiment, type Tally } from "../../tools/eval-workflows/run";
import { simulatedWorker } from "../../tools/eval-workflows/simulate";
import type { Workflow } from "../../tools/eval-workflows/types";

/**
 * The IT/ops desk (tools/eval-workflows/ops.ts: tickets, severities, hostnames, package URLs whose domain and
 * extension decide, versions, sizes, ports, crons, windows, UUIDs, IPv4 and IPv6 and MAC addresses three deep
 * in a tool result, a Unix timestamp) in memory, with 5 of each of its 12 traps, seeds 42, 1 and 7. Before the
 * rule on words inside identifiers, seed 42 scheduled an `.exe` (quarantined) and seed 7 a package from a
 * domain off the allow-list, both served from templates confirmed on other packages.
 */
describe("the IT/ops desk in memory (template hunt 4)", () => {
  const all = (r: { warm: Tally; fresh: Tally; traps: Tally }) => [...r.warm.mismatches, ...r.fresh.mismatches, ...r.traps.mismatches];

  for (const seed of [42, 1, 7]) {
    it(`Should serve the ops desk (learned, seed ${seed}) with no wrong replay over 80 new runs and 5 of each trap`, { timeout: 60_000 }, async () => {
      const sim = simulatedWorker((body) => opsDesk.script(body));
      const r = await experiment(opsDesk as Workflow<unknown>, "wf-ops", sim.chat, {
        mode: "learned",
        warm: 8,
        fresh: 80,
        trapsPerKind: 5,
        seed,
        tag: "hunt4",
      });
      expect(all(r)).toEqual([]);
      // Templates serve it, traps included, so the decisions above were put to them.
      expect(r.fresh.served.learned).toBeGreaterThan(20);
      expect(r.traps.served.learned).toBeGreaterThan(0);
    });
  }
});
