import { describe, expect, it } from "vitest";
import { runReplay } from "../../tools/replay-run";

describe("replay of ../shared/workloads (a subset; `npm run replay` runs all)", () => {
  it("Should serve pass 2 entirely from the tree, message for message", async () => {
    const report = await runReplay(["tau_bench.jsonl", "tau2_bench.jsonl"], 12);
    console.log(JSON.stringify({ requests: report.requests, pass1: report.pass1.outcomes, pass2: report.pass2.outcomes, stored: report.storedBytes, bodies: report.requestBytes }));
    expect(report.requests).toBeGreaterThan(200);
    expect(report.pass1.errors).toBe(0);
    expect(report.pass1.outcomes.miss).toBe(report.requests);
    expect(report.pass2.outcomes).toEqual({ hit: report.requests });
    expect(report.pass2.mismatches).toBe(0);
    expect(report.upstreamGenerationsPass2).toBe(0);
    expect(report.storedBytes / report.requestBytes).toBeLessThan(0.05);
  });
});
