import { describe, expect, it } from "vitest";
import { runSoak } from "../../scripts/soak";

describe("a short soak under wrangler dev (the long form: npm run soak)", () => {
  it("Should serve many concurrent agents of several tenants without an error, a wrong answer or a cross-tenant hit, and leave D1 consistent", async () => {
    const report = await runSoak({ seconds: 20, agents: 12, tenants: 3, questions: 8 });
    expect(report.errorSamples).toEqual([]);
    expect(report.errors).toBe(0);
    expect(report.wrongAnswers).toBe(0);
    expect(report.crossTenantHits).toBe(0);
    // The run really mixed what it claims to mix.
    expect(report.hits).toBeGreaterThan(0);
    expect(report.misses).toBeGreaterThan(0);
    expect(report.bypasses).toBeGreaterThan(0);
    expect(report.streams).toBeGreaterThan(0);
    expect(report.prunes).toBeGreaterThan(0);
    // D1 afterwards: one node per path hash, no orphans, node_count true.
    expect(report.duplicatePathHashes).toBe(0);
    expect(report.orphanNodes).toBe(0);
    expect(report.nodeCountMismatches).toBe(0);
    // Counters add up.
    const c = report.counters;
    expect(c.hitsCounted).toBe(c.hitsServed);
    expect(c.missesCounted).toBe(c.missesServed);
    expect(c.bypassesCounted).toBe(c.bypassesServed);
    expect(c.generations).toBe(c.missesServed + c.bypassesServed);
  }, 180_000);
});
