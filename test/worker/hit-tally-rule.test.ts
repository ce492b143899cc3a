import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { HitTally, MAX_PAGES_PER_WRITE, PAGE_ROWS } from "../../src/store/objects/hit-tally";
import { emptyTally, type TallyBatch } from "../../src/store/tree/tally-batch";

/**
 * The counters' rule (issue 29 outcome 1): a node's row is written at most once per TALLY_FLUSH_MS for the
 * whole deployment, even when a write is left in pages for later and more counts arrive meanwhile. The clock
 * is the test's (Date alone is faked); the alarm is called by hand and its armed time read back.
 */

const INTERVAL = 60_000;

async function hitsOf(hash: string): Promise<number> {
  const row = await env.DB.prepare("SELECT hits FROM nodes WHERE hash = ?1").bind(hash).first<{ hits: number }>();
  return row?.hits ?? -1;
}

function tallyOf(treeId: string, nodes: string[]): TallyBatch {
  const tally = emptyTally(treeId);
  tally.tree = { hits: nodes.length, bypasses: 0, promptTokens: 0, completionTokens: 0, latencyMs: 0, lastHitAt: 5 };
  for (const node of nodes) tally.nodes[node] = { hits: 1, lastHitAt: 5 };
  return tally;
}

describe("hit tally: at most one write per node per interval", () => {
  afterEach(() => vi.useRealTimers());

  it("Should write the pages a write left for later without what arrived meanwhile, and arm that an interval after the last page", async () => {
    const treeId = crypto.randomUUID().replaceAll("-", "");
    const first = crypto.randomUUID().replaceAll("-", "");
    await env.DB.batch([
      env.DB.prepare("INSERT INTO trees (id, tenant, namespace, frame, model, created_at) VALUES (?1, 't', 'default', '{}', 'm', 0)").bind(treeId),
      env.DB.prepare("INSERT INTO nodes (hash, parent, tree_id, depth, role, message) VALUES (?1, 'p', ?2, 1, 'assistant', '{}')").bind(first, treeId),
    ]);
    // More rows than one write takes: the first alarm leaves pages for later. The rest need no row in D1 (an update of nothing).
    const others = Array.from({ length: MAX_PAGES_PER_WRITE * PAGE_ROWS + 10 }, (_, i) => `absent-${treeId}-${i}`);
    const start = Date.now();
    vi.useFakeTimers({ toFake: ["Date"], now: start });
    const stub = env.HIT_TALLY.get(env.HIT_TALLY.idFromName(treeId));
    await runInDurableObject(stub, async (instance: HitTally, state) => {
      await instance.add(tallyOf(treeId, [first, ...others]), INTERVAL);
      expect(await state.storage.getAlarm()).toBe(start + INTERVAL);

      vi.setSystemTime(start + INTERVAL);
      await instance.alarm();
      expect(await hitsOf(first)).toBe(1);
      const left = await instance.pendingRows();
      expect(left).toBeGreaterThan(0);

      // Another isolate's counts for the node just written arrive while pages are left.
      vi.setSystemTime(start + INTERVAL + 100);
      await instance.add(tallyOf(treeId, [first]), INTERVAL);
      vi.setSystemTime(start + INTERVAL + 1_000);
      await instance.alarm();
      // The carried pages went; the node's new count did not go with them (before: merged in, a second write within a second).
      expect(await hitsOf(first)).toBe(1);
      expect(await instance.pendingRows()).toBe(2);
      // Its write is armed a whole interval after the last page written.
      expect(await state.storage.getAlarm()).toBeGreaterThanOrEqual(start + INTERVAL + 1_000 + INTERVAL);

      vi.setSystemTime((await state.storage.getAlarm()) ?? 0);
      await instance.alarm();
      expect(await hitsOf(first)).toBe(2);
      expect(await instance.pendingRows()).toBe(0);
      await state.storage.deleteAlarm();
    });
  });
});
