import { directoryDb, resolveHome, shardNamed, type DirectoryRow } from "./directory";
import { drainTree } from "./drain-tree";
import { copyTree } from "./move-pages";
import type { PageCounts } from "./page-sql";
import { shardOf, shards } from "./shards";

/**
 * Moving a tree to another shard (POST /api/trees/:id/move). The copy runs
 * inside the tree's writer and learner objects, each holding its queue of
 * writes (src/store/objects/move-rpc.ts), so nothing writes the tree's nodes
 * or templates while it runs:
 *
 * 1. the directory row gets `moving_to` (a crash now leaves partial rows in
 *    the target, which nobody reads: the next activation deletes them);
 * 2. every row is copied to the target in pages (src/store/shards/move-pages.ts);
 * 3. one directory update switches `shard` to the target and sets
 *    `draining_from` to the source; both objects now write the target, and
 *    release their queues;
 * 4. the source's rows are deleted in pages (`finishMove`), while the tree's
 *    writes go on in the target; then `draining_from` is cleared.
 *
 * Readers that still believe the source find the same rows as at the switch
 * (before 4), whole sibling sets of them (during it) or none (after it): a
 * hit or a miss, never a wrong answer. A crash between 3 and the end is
 * finished by the next activation of the tree's writer, before its first write.
 * Every page yields to the event loop (move-pages.ts `breathe`): the Worker
 * answers other requests while a move runs.
 */
export type MoveResult =
  | { ok: true; tree_id: string; from: string; to: string; copied: PageCounts; deleted: PageCounts }
  | { ok: false; status: 404 | 409; message: string };

/** Steps 1-3 of a move: the tree copied and the directory switched; the source still to drain. */
export type SwitchResult = { ok: true; tree_id: string; from: string; to: string; copied: PageCounts } | { ok: false; status: 404 | 409; message: string };

/** Finishes what a crashed move left: partial copies in `moving_to`, undrained rows in `draining_from`. */
export async function settle(env: Env, row: DirectoryRow): Promise<DirectoryRow> {
  let settled = row;
  if (row.moving_to) {
    if (row.moving_to !== row.shard) await drainTree(shardNamed(env, row.moving_to).db, row.tree_id);
    await directoryDb(env).prepare(`UPDATE tree_directory SET moving_to = NULL WHERE tree_id = ?1`).bind(row.tree_id).run();
    settled = { ...settled, moving_to: null };
  }
  if (row.draining_from) {
    if (row.draining_from !== row.shard) await drainTree(shardNamed(env, row.draining_from).db, row.tree_id);
    await directoryDb(env).prepare(`UPDATE tree_directory SET draining_from = NULL WHERE tree_id = ?1`).bind(row.tree_id).run();
    settled = { ...settled, draining_from: null };
  }
  return settled;
}

/** Steps 1-3: copies `treeId` to shard `to` and switches the directory. Call it only from inside the tree's writer and learner queues. */
export async function switchTree(env: Env, treeId: string, to: string, now = Date.now()): Promise<SwitchResult> {
  const found = await resolveHome(env, treeId, null);
  if (!found) return { ok: false, status: 404, message: `No tree ${treeId}.` };
  const row = await settle(env, found);
  if (row.shard === to) return { ok: false, status: 409, message: `Tree ${treeId} is already in shard ${to}.` };
  const source = shardNamed(env, row.shard);
  const target = shardNamed(env, to);
  const dir = directoryDb(env);
  await dir.prepare(`UPDATE tree_directory SET moving_to = ?2 WHERE tree_id = ?1`).bind(treeId, to).run();
  const copied = await copyTree(source.db, target.db, treeId);
  await dir
    .prepare(`UPDATE tree_directory SET shard = ?2, moving_to = NULL, draining_from = ?3, moved_at = ?4 WHERE tree_id = ?1`)
    .bind(treeId, to, source.name, now)
    .run();
  return { ok: true, tree_id: treeId, from: source.name, to, copied };
}

/** Step 4: deletes the tree's rows from the shard it left, then clears `draining_from`. Needs no queue: nothing writes the source after the switch. */
export async function finishMove(env: Env, treeId: string, from: string): Promise<PageCounts> {
  const deleted = await drainTree(shardNamed(env, from).db, treeId);
  await directoryDb(env).prepare(`UPDATE tree_directory SET draining_from = NULL WHERE tree_id = ?1 AND draining_from = ?2`).bind(treeId, from).run();
  return deleted;
}

/**
 * Where the writer (or learner) object of one tree writes: resolved once per
 * activation through the directory, after finishing any crashed move; set to
 * the target when a move switched (its drain is the mover's), forgotten when
 * a move failed. One shard: no directory at all.
 */
export class TreeHome {
  private known: { treeId: string; shard: string } | null = null;

  constructor(private readonly env: Env) {}

  /** The tree's shard; `identity` places a new tree (a recording, an import) when it has no row yet. */
  async db(treeId: string, identity: { tenant: string; namespace: string } | null = null): Promise<D1Database> {
    return shardNamed(this.env, await this.name(treeId, identity)).db;
  }

  /** The name of the tree's shard (as `db` resolves it). */
  async name(treeId: string, identity: { tenant: string; namespace: string } | null = null): Promise<string> {
    const all = shards(this.env);
    if (all.length === 1) return all[0].name;
    if (this.known?.treeId === treeId) return this.known.shard;
    const found = await resolveHome(this.env, treeId, identity);
    if (!found)
      return shardOf(
        all.map((s) => s.name),
        treeId,
      );
    const row = await settle(this.env, found);
    this.known = { treeId, shard: row.shard };
    return row.shard;
  }

  /** The database of shard `name`, as `db` hands it out. */
  dbNamed(name: string): D1Database {
    return shardNamed(this.env, name).db;
  }

  /** After a failed move: read the directory again (and finish what it left) on the next write. */
  forget(): void {
    this.known = null;
  }

  /** After a move's switch: write `shard` from now on, without settling the drain that the mover runs. */
  movedTo(treeId: string, shard: string): void {
    this.known = { treeId, shard };
  }
}
