import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { recordGeneration, recordGenerations, type RecordInput } from "../../src/store/tree/record";
import { treeWriterOf } from "../../src/store/objects/tree-objects";
import { recording } from "./recordings";

/** What a tree holds: its counters and every node's observations, by position (hashes differ per tree). */
async function state(treeId: string): Promise<{ nodeCount: number; misses: number; nodes: number; observations: number[] }> {
  const tree = await env.DB.prepare("SELECT node_count AS nodeCount, misses FROM trees WHERE id = ?1")
    .bind(treeId)
    .first<{ nodeCount: number; misses: number }>();
  const rows = await env.DB.prepare("SELECT observations FROM nodes WHERE tree_id = ?1 ORDER BY depth, message").bind(treeId).all<{ observations: number }>();
  return { nodeCount: tree?.nodeCount ?? 0, misses: tree?.misses ?? 0, nodes: rows.results.length, observations: rows.results.map((r) => r.observations) };
}

/** Three recordings that share nodes: a second conversation through the first's answer, and the first again. */
function group(treeId: string): RecordInput[] {
  const first = recording(treeId, ["hi", "hello", "refund A-1"], "done");
  const deeper = recording(treeId, ["hi", "hello", "refund A-1", "done", "and B-2"], "also done");
  return [first, deeper, recording(treeId, ["hi", "hello", "refund A-1"], "done")];
}

describe("recordings written together", () => {
  it("Should store a group in one batch exactly as one after the other: nodes once, observations and counters right", async () => {
    const together = `batch-${crypto.randomUUID()}`;
    const apart = `apart-${crypto.randomUUID()}`;
    const outcomes = await recordGenerations(env.DB, group(together));
    for (const input of group(apart)) await recordGeneration(env.DB, input);
    expect(outcomes).toEqual([
      { nodesInserted: 4, answerIsNew: true },
      { nodesInserted: 2, answerIsNew: true },
      { nodesInserted: 0, answerIsNew: false },
    ]);
    const expected = await state(apart);
    expect(expected).toMatchObject({ nodeCount: 6, misses: 3, nodes: 6 });
    expect(await state(together)).toEqual(expected);
  });

  it("Should record every one of many concurrent recordings of one tree's object, with counters as if one at a time", async () => {
    const treeId = `concurrent-${crypto.randomUUID()}`;
    const writer = treeWriterOf(env, treeId);
    const inputs = Array.from({ length: 8 }, (_, i) => recording(treeId, ["hi", `ask ${i % 4}`], `answer ${i % 4}`));
    const outcomes = await Promise.all(inputs.map((input) => writer.record(input)));
    expect(outcomes.filter((o) => o.answerIsNew)).toHaveLength(4);
    // "hi" once, four asks, four answers; each answer observed twice.
    expect(await state(treeId)).toMatchObject({ nodeCount: 9, misses: 8, nodes: 9 });
    expect((await state(treeId)).observations.filter((o) => o === 2)).toHaveLength(4);
  });

  it("Should still store the others of a group when one recording of it fails", async () => {
    const treeId = `one-bad-${crypto.randomUUID()}`;
    const marker = `bad-${crypto.randomUUID().slice(0, 8)}`;
    await env.DB.exec(
      `CREATE TRIGGER batch_fault BEFORE INSERT ON nodes WHEN instr(NEW.message, '${marker}') > 0 BEGIN SELECT RAISE(ABORT, 'injected D1 fault'); END`,
    );
    try {
      const writer = treeWriterOf(env, treeId);
      const inputs = [0, 1, 2, 3].map((i) => recording(treeId, ["hi", `ask ${i}`], i === 2 ? marker : `answer ${i}`));
      const settled = await Promise.allSettled(inputs.map((input) => writer.record(input)));
      expect(settled.map((s) => s.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled"]);
      expect(await state(treeId)).toMatchObject({ misses: 3, nodes: 7, nodeCount: 7 });
    } finally {
      await env.DB.exec("DROP TRIGGER IF EXISTS batch_fault");
    }
  });
});
