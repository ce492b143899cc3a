import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { ServedAnswer } from "../../src/cache/provider";
import { pruneStale } from "../../src/store/prune/prune";
import { drainTree } from "../../src/store/shards/drain-tree";
import { keepServedAnswer, servedAnswerOf } from "../../src/store/tree/served-answers";

/** Template answers kept for chaining (src/store/tree/served-answers.ts) in the pool's real D1: read per tenant, aged out, deleted with the tree. */
const hex = () => crypto.randomUUID().replaceAll("-", "");
const rowOf = (treeId: string, answerHash = hex()): ServedAnswer => ({
  treeId,
  answerHash,
  parent: hex(),
  base: treeId,
  tail: [{ hash: hex(), message: '{"role":"user","content":[{"type":"text","text":"hi"}]}' }],
  answer: '{"role":"assistant","items":[]}',
  links: 0,
});
const count = async (treeId: string) =>
  (await env.DB.prepare("SELECT count(*) AS n FROM served_answers WHERE tree_id = ?1").bind(treeId).first<{ n: number }>())?.n ?? 0;

describe("kept template answers", () => {
  it("Should read a kept answer back for its tenant only, and refresh it when the same answer is served again", async () => {
    const treeId = hex();
    const row = rowOf(treeId);
    await keepServedAnswer(env.DB, "tenant-a", row, 1_000);
    expect(await servedAnswerOf(env.DB, "tenant-a", treeId, row.answerHash)).toEqual(row);
    expect(await servedAnswerOf(env.DB, "tenant-b", treeId, row.answerHash)).toBeNull();
    expect(await servedAnswerOf(env.DB, "tenant-a", hex(), row.answerHash)).toBeNull();
    await keepServedAnswer(env.DB, "tenant-a", row, 5_000);
    const stored = await env.DB.prepare("SELECT created_at AS at FROM served_answers WHERE answer_hash = ?1").bind(row.answerHash).all<{ at: number }>();
    expect(stored.results).toEqual([{ at: 5_000 }]);
  });

  it("Should delete the tree's answers kept before the stale prune's cutoff, in pages, and keep the newer ones and other trees'", async () => {
    const treeId = hex();
    const other = hex();
    for (let i = 0; i < 130; i++) await keepServedAnswer(env.DB, "t", rowOf(treeId), 1_000 + i);
    await keepServedAnswer(env.DB, "t", rowOf(treeId), 9_000);
    await keepServedAnswer(env.DB, "t", rowOf(other), 1_000);
    await pruneStale(env.DB, treeId, { cutoff: 5_000, minHits: null });
    expect([await count(treeId), await count(other)]).toEqual([1, 1]);
  });

  it("Should delete every kept answer of a tree drained from its shard", async () => {
    const treeId = hex();
    await keepServedAnswer(env.DB, "t", rowOf(treeId));
    await keepServedAnswer(env.DB, "t", rowOf(treeId));
    expect(await count(treeId)).toBe(2);
    await drainTree(env.DB, treeId);
    expect(await count(treeId)).toBe(0);
  });
});
