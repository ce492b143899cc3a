import type { ShardTreesRecord } from "../tree/schema";
import { shardOf } from "./shards";

/**
 * Where a new tree goes: the least-full shard, by the trees per shard that the directory's triggers keep in
 * `shard_trees` (migration 0011: +1 on a directory row's insert, -1 on its delete, -1/+1 on a move's switch).
 * Reading them reads one row per shard, never the directory itself: no scan grows with the number of trees.
 * Existing trees never move by this: only a tree with no directory row is placed (src/store/shards/directory.ts
 * `resolveHome`), and its row is written once (`INSERT OR IGNORE`).
 */

/** How long an isolate places new trees by the counts it read, counting up locally the trees it places in between. */
export const PLACEMENT_COUNTS_TTL_MS = 60_000;

let placement: { counts: Map<string, number>; until: number } | null = null;

/**
 * Trees per shard for each of `names` (a shard with no row counts 0), read from `dir` at most once per
 * PLACEMENT_COUNTS_TTL_MS per isolate (or sooner when the shard list changed).
 */
export async function treesPerShard(dir: D1Database, names: readonly string[], now: number): Promise<Map<string, number>> {
  if (placement && placement.until > now && names.every((n) => placement?.counts.has(n))) return placement.counts;
  const counts = new Map(names.map((n) => [n, 0]));
  const rows = await dir.prepare(`SELECT shard, trees FROM shard_trees`).all<ShardTreesRecord>();
  for (const r of rows.results) if (counts.has(r.shard)) counts.set(r.shard, Math.max(0, r.trees));
  placement = { counts, until: now + PLACEMENT_COUNTS_TTL_MS };
  return counts;
}

/** Counts a tree this isolate just placed on `shard` (until the next read of the counts). */
export function placed(shard: string): void {
  placement?.counts.set(shard, (placement.counts.get(shard) ?? 0) + 1);
}

/** Forgets the counts this isolate read, so that the next placement reads them again (tests). */
export function forgetPlacementCounts(): void {
  placement = null;
}

/** The least-full shard (fewest trees), ties broken by the hash rule's order for this tree. Pure. */
export function leastFull(counts: ReadonlyMap<string, number>, treeId: string): string {
  const names = [...counts.keys()];
  const fewest = Math.min(...counts.values());
  const candidates = names.filter((n) => counts.get(n) === fewest);
  return shardOf(candidates, treeId);
}
