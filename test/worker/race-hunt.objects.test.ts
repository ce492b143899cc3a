import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { emptyTally, type TallyBatch } from "../../src/store/tree/tally-batch";
import { eventually } from "./helpers";
import { seedTree } from "./tally.support";

/**
 * The tree's objects failing inside (docs/reliability.md, "Under real traffic, hunted"): counters resume once
 * the fault has passed. Faults are injected into the real object (its storage refuses one call), never a mock.
 */

async function nodeHits(hash: string): Promise<number> {
  const row = await env.DB.prepare("SELECT hits FROM nodes WHERE hash = ?1").bind(hash).first<{ hits: number }>();
  return row?.hits ?? -1;
}

function hits(treeId: string, node: string, n: number): TallyBatch {
  const batch = emptyTally(treeId);
  batch.tree = { hits: n, bypasses: 0, promptTokens: 0, completionTokens: 0, latencyMs: 0, lastHitAt: 5 };
  batch.nodes[node] = { hits: n, lastHitAt: 5 };
  return batch;
}

describe("a hit tally whose storage refuses its alarm once", () => {
  it("Should set its alarm again on the next add and write every count, not hold them forever", async () => {
    const { treeId, node } = await seedTree();
    const tally = env.HIT_TALLY.get(env.HIT_TALLY.idFromName(treeId));
    await runInDurableObject(tally, (_, state) => {
      const storage = state.storage as unknown as { setAlarm: (at: number) => Promise<void> };
      const real = storage.setAlarm.bind(storage);
      storage.setAlarm = async () => {
        storage.setAlarm = real;
        throw new Error("injected: storage refused the alarm");
      };
    });
    // The add keeps its counts (the alarm's failure is the object's to retry, logged: tally_alarm_failed).
    await tally.add(hits(treeId, node, 2), 300);
    await tally.add(hits(treeId, node, 3), 300);
    await eventually(async () => (await nodeHits(node)) === 5, 10_000);
    expect(await tally.pendingRows()).toBe(0);
  });
});
