import { directoryDb } from "../shards/directory";
import { FIRST_PRUNE_WITHIN_MS } from "./alarm";
import { shards } from "../shards/shards";
import { treeWriterOf } from "../objects/tree-objects";

/**
 * The cron's sweep over every tree, which only arms each tree's stale-prune
 * alarm (src/store/prune/alarm.ts): one cheap call to the tree's writer,
 * which sets its alarm if none is set (a tree written since alarms exist has
 * one already). It lists each shard's `trees` in id order from a cursor kept
 * in `prune_sweep` (in DB), at most `budget` trees per run split evenly over
 * the shards, so one run visits a bounded number of trees and the next
 * resumes where it stopped. At the end of a shard it starts the next pass
 * from the beginning on the following run: a tree whose alarm stopped (it
 * fired while PRUNE_TTL_MS was 0) is armed again within one pass.
 */

/** Trees one cron run arms at most (each one Durable Object call). */
export const ARM_TREES_PER_RUN = 1000;
/** Trees per page of `trees`. */
const PAGE = 100;
/** Arming calls in flight at once. */
const CONCURRENCY = 10;

export interface SweepOutcome {
  /** Trees visited in this run. */
  visited: number;
  /** Of them, trees whose alarm is set (armed now or before). */
  armed: number;
  /** Shards whose pass ended in this run. */
  passesEnded: number;
}

async function armAll(env: Env, shard: string, ids: readonly string[]): Promise<number> {
  let armed = 0;
  for (let i = 0; i < ids.length; i += CONCURRENCY) {
    const results = await Promise.all(ids.slice(i, i + CONCURRENCY).map((id) => treeWriterOf(env, id, shard).armPrune(id, FIRST_PRUNE_WITHIN_MS)));
    armed += results.filter(Boolean).length;
  }
  return armed;
}

/** Arms the prune alarms of at most `budget` trees, resuming each shard's pass where the last run stopped. */
export async function armPruneAlarms(env: Env, budget = ARM_TREES_PER_RUN, now = Date.now()): Promise<SweepOutcome> {
  const all = shards(env);
  const dir = directoryDb(env);
  const perShard = Math.max(1, Math.floor(budget / all.length));
  const outcome: SweepOutcome = { visited: 0, armed: 0, passesEnded: 0 };
  for (const shard of all) {
    const state = await dir.prepare(`SELECT after FROM prune_sweep WHERE shard = ?1`).bind(shard.name).first<{ after: string }>();
    let after = state?.after ?? "";
    let left = perShard;
    while (left > 0) {
      const limit = Math.min(PAGE, left);
      const page = await shard.db.prepare(`SELECT id FROM trees WHERE id > ?1 ORDER BY id LIMIT ?2`).bind(after, limit).all<{ id: string }>();
      const ids = page.results.map((r) => r.id);
      outcome.visited += ids.length;
      outcome.armed += await armAll(env, shard.name, ids);
      left -= ids.length;
      const ended = ids.length < limit;
      after = ended ? "" : ids[ids.length - 1];
      await dir
        .prepare(
          `INSERT INTO prune_sweep (shard, after, passes, passed_at) VALUES (?1, ?2, ?3, ?4)
           ON CONFLICT (shard) DO UPDATE SET after = ?2, passes = passes + ?3, passed_at = coalesce(?4, passed_at)`,
        )
        .bind(shard.name, after, ended ? 1 : 0, ended ? now : null)
        .run();
      if (ended) {
        // One pass per shard and run: the next pass starts on the next run.
        outcome.passesEnded++;
        break;
      }
    }
  }
  return outcome;
}
