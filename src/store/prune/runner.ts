import { logEvent } from "../../observability/log-event";
import { shardFor } from "../shards/directory";
import { backfillDirectory, ownersOf, shardsToRead } from "../shards/directory-backfill";
import { treeWriterOf } from "../objects/tree-objects";
import { ARM_TREES_PER_RUN, armPruneAlarms, type SweepOutcome } from "./sweep";
import { addOutcome, previewStale, type PruneOutcome, type PruneRequest, type PruneResult, type StaleCriteria } from "./prune";
import { tenantParam, type Scope } from "../tree/scope";

const TREES_PER_PAGE = 100;

/** What the caller's caches must forget after a prune: the keys (h_n) whose answer sets changed. */
export type ForgetAnswers = (changedKeys: string[]) => Promise<void>;

/**
 * Runs a prune in the tree's Durable Object (serialised with its writes, and
 * it forgets single flight's recent answers), then has the caller forget the
 * changed keys (the isolate's memory and the colo's entries: src/engine/isolate.ts
 * `forgetAnswers`), so that this colo never serves a pruned answer.
 */
export async function pruneThroughWriter(env: Env, request: PruneRequest, forget: ForgetAnswers): Promise<PruneOutcome> {
  const writer = treeWriterOf(env, request.treeId);
  // SAFETY: RPC types the result as a stub; PruneResult is plain data (counts and hashes), so the cast only unwraps that type.
  const { changedKeys, ...outcome } = (await writer.prune(request)) as PruneResult;
  await forget(changedKeys);
  return outcome;
}

/**
 * A stale prune over one tree, or every tree of a tenant (null: every
 * tenant), shard by shard (POST /api/prune). A dry run only reads; a real run
 * goes through each tree's Durable Object, in pages between its writes.
 */
export async function pruneStaleTrees(
  env: Env,
  q: { scope: Scope; treeId?: string; criteria: StaleCriteria; dryRun: boolean; directoryTimeoutMs: number },
  forget: ForgetAnswers,
): Promise<PruneOutcome> {
  let total: PruneOutcome = { trees: 0, nodes: 0, answers: 0, templates: 0, roots: [] };
  const from = q.treeId ? [await shardFor(env, q.treeId, { timeoutMs: q.directoryTimeoutMs })] : await shardsToRead(env, q.scope);
  for (const { name, db } of from) {
    let after = "";
    for (;;) {
      const page = await db
        .prepare(`SELECT id FROM trees WHERE (?1 IS NULL OR tenant = ?1) AND (?2 IS NULL OR id = ?2) AND id > ?3 ORDER BY id LIMIT ${TREES_PER_PAGE}`)
        .bind(tenantParam(q.scope), q.treeId ?? null, after)
        .all<{ id: string }>();
      // A row in a shard the directory does not name for its tree (a move's copy) is the same tree: counted once, where it lives.
      const owners =
        from.length > 1
          ? await ownersOf(
              env,
              page.results.map((r) => r.id),
            )
          : new Map<string, string>();
      for (const { id } of page.results) {
        if ((owners.get(id) ?? name) !== name) continue;
        const one = q.dryRun
          ? await previewStale(db, id, q.criteria)
          : await pruneThroughWriter(env, { kind: "stale", treeId: id, criteria: q.criteria, dryRun: false }, forget);
        total = addOutcome(total, one);
      }
      if (page.results.length < TREES_PER_PAGE) break;
      after = page.results[page.results.length - 1].id;
    }
  }
  return total;
}

/**
 * The scheduled (cron) run: the directory backfill's next pages, then the
 * sweep that arms each tree's stale-prune alarm (src/store/prune/sweep.ts),
 * at most ARM_TREES_PER_RUN trees a run. The pruning itself runs per tree on
 * its writer's alarm (src/store/prune/alarm.ts), removing paths whose answers
 * were last hit (or recorded) more than PRUNE_TTL_MS ago; 0 or unset disables it.
 */
export async function scheduledPrune(env: Env, ttl: number, budget = ARM_TREES_PER_RUN): Promise<SweepOutcome | null> {
  // The tree directory's backfill (trees recorded before it) goes on a bounded number of pages a run until done.
  const backfill = await backfillDirectory(env).catch((error: unknown) => ({ inserted: 0, done: false, error: String(error) }));
  if (backfill.inserted > 0 || !backfill.done) logEvent("info", "directory_backfill", backfill);
  if (!Number.isFinite(ttl) || ttl <= 0) return null;
  const outcome = await armPruneAlarms(env, budget);
  logEvent("info", "prune_sweep", { ttl_ms: ttl, visited: outcome.visited, armed: outcome.armed, passes_ended: outcome.passesEnded });
  return outcome;
}
