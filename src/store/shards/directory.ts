import { withTimeout } from "../../core/deadline";
import { ExpiringMap } from "../../core/expiring-map";
import type { DirectoryRecord, TreeRecord } from "../tree/schema";
import { leastFull, placed, treesPerShard } from "./placement";
import { shardOf, shards, type Shard } from "./shards";

/**
 * The tree directory: which shard holds each tree (table `tree_directory`,
 * read and written in the first shard, binding `DB`, only).
 *
 * - **New trees** go to the least-full shard, by the trees per shard that the
 *   directory's triggers keep in `shard_trees` (src/store/shards/placement.ts:
 *   one row per shard is read, never the whole directory), ties broken by the hash rule.
 * - **Trees recorded before the directory** have no row: they are where the
 *   hash rule over D1_SHARDS put them. Their writer (or their hit tally) looks
 *   for the tree's row in every shard once and records the directory row
 *   (lazy backfill, `resolveHome`); `backfillDirectory` does it for a whole shard.
 * - **Reads** (`shardFor`) cache a tree's shard per isolate for at most
 *   DIRECTORY_TTL_MS, bounded to DIRECTORY_CACHE_MAX trees, so a warm hit reads
 *   no directory. A stale entry is never wrong, only a miss: a move copies the
 *   tree while its writer holds every write, switches the row, then deletes the
 *   old rows a sibling set at a time (src/store/shards/move.ts), so the old shard holds
 *   the rows of the switch, whole sibling sets of them, or none.
 */

/** A directory row as stored (its columns by their database names, from the schema). */
export type DirectoryRow = DirectoryRecord;

/** How long an isolate trusts a tree's shard after reading it (a moved tree misses at most this long there). */
export const DIRECTORY_TTL_MS = 10_000;
/** Trees whose shard one isolate remembers (the oldest are forgotten first). */
export const DIRECTORY_CACHE_MAX = 10_000;

/** The database that holds the directory: the binding `DB`, else the first shard. */
export function directoryDb(env: Env): D1Database {
  return (env as { DB?: D1Database }).DB ?? shards(env)[0].db;
}

/** The shard bound as `name`; throws when this Worker lacks it (callers fail open). */
export function shardNamed(env: Env, name: string): Shard {
  const shard = shards(env).find((s) => s.name === name);
  if (!shard) throw new Error(`the directory names shard '${name}', which is not in D1_SHARDS`);
  return shard;
}

export async function readEntry(env: Env, treeId: string): Promise<DirectoryRow | null> {
  return directoryDb(env).prepare(`SELECT * FROM tree_directory WHERE tree_id = ?1`).bind(treeId).first<DirectoryRecord>();
}

/** This isolate's tree -> shard memory: DIRECTORY_TTL_MS per entry, at most DIRECTORY_CACHE_MAX trees. */
const memo = new ExpiringMap<string>(DIRECTORY_CACHE_MAX);

/**
 * The last shard this isolate read for each tree, kept past DIRECTORY_TTL_MS (bounded the same way): what
 * a warm tree is read from while the directory is slow or down, or while its row is read again in the
 * background. A stale shard can only miss (a move deletes the old rows after the switch), never serve wrong.
 */
const lastKnown = new ExpiringMap<string>(DIRECTORY_CACHE_MAX);
/** Long enough to outlive any directory outage worth riding out; a tree unread this long is cold anyway. */
const LAST_KNOWN_MS = 24 * 3_600_000;
/** Background re-reads in flight, by tree (one per tree per isolate). */
const refreshing = new Set<string>();

/** How many trees this isolate remembers (for tests of the bound). */
export function rememberedTrees(): number {
  return memo.size;
}

/** Lets every fresh entry lapse, as DIRECTORY_TTL_MS does, keeping the last known shards (tests). */
export function lapseShardMemory(): void {
  memo.clear();
}

/** Forgets this isolate's entry for a tree (after this isolate moved it). */
export function forgetShard(treeId: string): void {
  memo.delete(treeId);
  lastKnown.delete(treeId);
}

/** How a request reads the directory: its bound (`DIRECTORY_TIMEOUT_MS`, handed in from the config), its clock, and where deferred work goes. */
export interface DirectoryRead {
  timeoutMs: number;
  now?: number;
  /** Runs work after the response (ctx.waitUntil): a warm tree's expired entry is then read in the background. */
  defer?: (work: Promise<unknown>) => void;
}

/** Reads the tree's row within `timeoutMs` (DIRECTORY_TIMEOUT_MS) and remembers it; null when it has none. */
async function readShard(env: Env, treeId: string, now: number, timeoutMs: number): Promise<string | null> {
  const row = await withTimeout(readEntry(env, treeId), timeoutMs, "directory read");
  if (!row) return null;
  memo.set(treeId, row.shard, now + DIRECTORY_TTL_MS);
  lastKnown.set(treeId, row.shard, now + LAST_KNOWN_MS);
  return row.shard;
}

/**
 * The shard to read `treeId` from, for hits and API reads. One shard: no read.
 * Else this isolate's memory, then the directory row; a tree with no row is
 * read where the hash rule puts it, and that answer is not remembered (the
 * row may appear any moment: a new tree placed by its writer, or a backfill).
 *
 * The directory never stands between a warm tree and its hits: once this
 * isolate knows a tree's shard, an expired entry is read again after the
 * response (`defer`, one read per tree at a time) while the request reads the
 * last known shard; without `defer`, a directory that fails or takes longer
 * than DIRECTORY_TIMEOUT_MS also falls back to it. A tree this isolate never
 * read waits for the directory (bounded by the timeout; a failure throws and
 * the caller fails open to the model).
 */
export async function shardFor(env: Env, treeId: string, read: DirectoryRead): Promise<Shard> {
  const { timeoutMs, now = Date.now(), defer } = read;
  const all = shards(env);
  if (all.length === 1) return all[0];
  const known = memo.get(treeId, now);
  if (known) return shardNamed(env, known);
  const last = lastKnown.get(treeId, now);
  if (last && defer) {
    if (!refreshing.has(treeId)) {
      refreshing.add(treeId);
      defer(
        readShard(env, treeId, now, timeoutMs)
          .catch(() => undefined)
          .finally(() => refreshing.delete(treeId)),
      );
    }
    return shardNamed(env, last);
  }
  let shard: string | null;
  try {
    shard = await readShard(env, treeId, now, timeoutMs);
  } catch (error) {
    if (last) return shardNamed(env, last);
    throw error;
  }
  return shardNamed(
    env,
    shard ??
      shardOf(
        all.map((s) => s.name),
        treeId,
      ),
  );
}

/** Where a tree lives now, by its `trees` row: the hash rule's shard first, then every other one; null when none has it. */
type TreeIdentity = Pick<TreeRecord, "tenant" | "namespace" | "created_at">;

async function findTreeRow(env: Env, treeId: string): Promise<({ shard: Shard } & TreeIdentity) | null> {
  const all = shards(env);
  const first = shardOf(
    all.map((s) => s.name),
    treeId,
  );
  const ordered = [...all].sort((a, b) => Number(b.name === first) - Number(a.name === first));
  for (const shard of ordered) {
    const row = await shard.db.prepare(`SELECT tenant, namespace, created_at FROM trees WHERE id = ?1`).bind(treeId).first<TreeIdentity>();
    if (row) return { shard, ...row };
  }
  return null;
}

/**
 * The writer's answer to "where is this tree": its directory row, made when
 * missing. A tree recorded before the directory gets a row naming the shard
 * that has its `trees` row (lazy backfill); a new tree (`identity` given: a
 * recording or an import) is placed on the least-full shard. Null for a tree
 * that exists nowhere and is not being created. `INSERT OR IGNORE` then a
 * read back: two racing callers agree on one row.
 */
export async function resolveHome(env: Env, treeId: string, identity: { tenant: string; namespace: string } | null): Promise<DirectoryRow | null> {
  const existing = await readEntry(env, treeId);
  if (existing) return existing;
  const found = await findTreeRow(env, treeId);
  if (!found && !identity) return null;
  const names = shards(env).map((s) => s.name);
  const shard = found ? found.shard.name : leastFull(await treesPerShard(directoryDb(env), names, Date.now()), treeId);
  const tenant = found?.tenant ?? identity?.tenant ?? "";
  const namespace = found?.namespace ?? identity?.namespace ?? "";
  const insert = await directoryDb(env)
    .prepare(`INSERT OR IGNORE INTO tree_directory (tree_id, tenant, namespace, shard, created_at) VALUES (?1, ?2, ?3, ?4, ?5)`)
    .bind(treeId, tenant, namespace, shard, found?.created_at ?? Date.now())
    .run();
  if (!found && (insert.meta.changes ?? 0) > 0) placed(shard);
  return readEntry(env, treeId);
}

/** The shard a tree's counters go to (the hit tally): its directory row (backfilled when missing), else the hash rule. */
export async function homeShard(env: Env, treeId: string): Promise<Shard> {
  const all = shards(env);
  if (all.length === 1) return all[0];
  const row = await resolveHome(env, treeId, null);
  return row
    ? shardNamed(env, row.shard)
    : shardNamed(
        env,
        shardOf(
          all.map((s) => s.name),
          treeId,
        ),
      );
}
