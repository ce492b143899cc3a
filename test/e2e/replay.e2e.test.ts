import { describe, expect, it } from "vitest";
import { runReplay } from "../../tools/replay-run";
import { SHIPPED_WORKLOADS } from "../../tools/workloads";
import { LONG_TESTS } from "../support/long-tests";

/** Trajectories per file: 4 of tau_bench and 4 of tau2_bench (99 requests) in `npm test`, 12 each (306) in `npm run test:long`. */
const PER_FILE = LONG_TESTS ? 12 : 4;
const MIN_REQUESTS = LONG_TESTS ? 200 : 90;

describe(`replay of ${PER_FILE} trajectories of each shipped workload (test/fixtures/workloads; npm run replay runs the full set)`, () => {
  it("Should serve pass 2 entirely from the tree, message for message", async () => {
    const report = await runReplay(["tau_bench.jsonl", "tau2_bench.jsonl"], PER_FILE, undefined, undefined, undefined, SHIPPED_WORKLOADS);
    console.log(
      JSON.stringify({
        requests: report.requests,
        pass1: report.pass1.outcomes,
        pass2: report.pass2.outcomes,
        stored: report.storedBytes,
        bodies: report.requestBytes,
      }),
    );
    expect(report.requests).toBeGreaterThanOrEqual(MIN_REQUESTS);
    expect(report.pass1.errors).toBe(0);
    // A pass-1 hit is a request identical to an earlier one up to tool-call ids; only those may differ from the log.
    expect((report.pass1.outcomes.miss ?? 0) + (report.pass1.outcomes.hit ?? 0)).toBe(report.requests);
    expect(report.pass1.mismatches).toBeLessThanOrEqual(report.pass1.outcomes.hit ?? 0);
    expect(report.pass2.outcomes).toEqual({ hit: report.requests });
    expect(report.pass2.mismatches).toBe(0);
    // Field by field, ids aside: content "" stays "" (the retail grok-3 lines), arguments as written, nothing added.
    expect(report.pass2.fidelity).toEqual({ mismatches: 0, examples: [] });
    expect(report.pass1.fidelity.mismatches).toBeLessThanOrEqual(report.pass1.outcomes.hit ?? 0);
    expect(report.upstreamGenerationsPass2).toBe(0);
    // Storage grows with distinct messages, not prompts (the full-set ratio is in docs/performance.md).
    expect(report.storedBytes / report.requestBytes).toBeLessThan(0.1);
  });
});
