import { directoryDb } from "./directory";
import { shards, type Shard } from "./shards";
import type { DirectoryBackfillRecord, DirectoryRecord, TreeRecord } from "../tree/schema";
import type { Scope } from "../tree/scope";

/**
 * Filling the tree directory for trees recorded before it, and reading only
 * the shards it names.
 *
 * - `backfillDirectory` lists each shard's `trees` in id order, a page at a
 *   time, and records a directory row for each tree that has none (`INSERT OR
 *   IGNORE`: a row made by a placement or a move wins). Its cursor and the
 *   moment a shard was finished are kept in `directory_backfill`, so the
 *   daily cron (src/store/prune/runner.ts) resumes where it stopped. Trees made
 *   after it get their row when they are placed (src/store/shards/move.ts TreeHome).
 * - `shardsToRead`: once every shard is finished, lists and stats read only
 *   the shards the directory names for the tenant; until then, every shard.
 */

/** Trees per page; 5 columns per row keeps an INSERT at 20 rows under D1's 100 parameters. */
const PAGE = 100;
const ROWS_PER_INSERT = 20;

type TreeRow = Pick<TreeRecord, "id" | "tenant" | "namespace" | "created_at">;

function insertRows(dir: D1Database, shard: string, rows: readonly TreeRow[]): D1PreparedStatement[] {
  const out: D1PreparedStatement[] = [];
  for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) {
    const chunk = rows.slice(i, i + ROWS_PER_INSERT);
    const values = chunk.map((_, r) => `(?${r * 5 + 1}, ?${r * 5 + 2}, ?${r * 5 + 3}, ?${r * 5 + 4}, ?${r * 5 + 5})`).join(", ");
    const params = chunk.flatMap((t) => [t.id, t.tenant, t.namespace, shard, t.created_at]);
    // RETURNING: the rows really inserted (D1's `changes` also counts the writes of shard_trees' trigger).
    out.push(
      dir.prepare(`INSERT OR IGNORE INTO tree_directory (tree_id, tenant, namespace, shard, created_at) VALUES ${values} RETURNING tree_id`).bind(...params),
    );
  }
  return out;
}

/** Backfills at most `pages` pages over all shards; `done` when every shard is finished. Only with several shards. */
export async function backfillDirectory(env: Env, pages = 50): Promise<{ inserted: number; done: boolean }> {
  const all = shards(env);
  if (all.length === 1) return { inserted: 0, done: true };
  const dir = directoryDb(env);
  let inserted = 0;
  let budget = pages;
  let done = true;
  for (const shard of all) {
    const state = await dir
      .prepare(`SELECT after, done_at FROM directory_backfill WHERE shard = ?1`)
      .bind(shard.name)
      .first<Pick<DirectoryBackfillRecord, "after" | "done_at">>();
    if (state?.done_at) continue;
    let after = state?.after ?? "";
    let finished = false;
    while (budget > 0 && !finished) {
      budget--;
      const page = await shard.db
        .prepare(`SELECT id, tenant, namespace, created_at FROM trees WHERE id > ?1 ORDER BY id LIMIT ${PAGE}`)
        .bind(after)
        .all<TreeRow>();
      const rows = page.results;
      finished = rows.length < PAGE;
      if (rows.length > 0) after = rows[rows.length - 1].id;
      const results = await dir.batch([
        ...insertRows(dir, shard.name, rows),
        dir
          .prepare(`INSERT INTO directory_backfill (shard, after, done_at) VALUES (?1, ?2, ?3) ON CONFLICT (shard) DO UPDATE SET after = ?2, done_at = ?3`)
          .bind(shard.name, after, finished ? Date.now() : null),
      ]);
      inserted += results.slice(0, -1).reduce((sum, r) => sum + r.results.length, 0);
    }
    if (!finished) done = false;
  }
  return { inserted, done };
}

/**
 * The shards that hold a tenant's trees: by the directory (the `(tenant,
 * shard)` index) once its backfill is finished on every shard, else every
 * shard. Every tenant's (the admin's scope): every shard.
 */
export async function shardsToRead(env: Env, scope: Scope): Promise<Shard[]> {
  const all = shards(env);
  if (all.length === 1) return all;
  const dir = directoryDb(env);
  // Every tenant's trees (the admin): every shard; a DISTINCT over the whole directory would read all of it.
  if (!("tenant" in scope)) return all;
  const { tenant } = scope;
  const [finished, named] = await dir.batch<Pick<DirectoryRecord, "shard">>([
    dir.prepare(`SELECT shard FROM directory_backfill WHERE done_at IS NOT NULL`),
    dir.prepare(`SELECT DISTINCT shard FROM tree_directory WHERE tenant = ?1`).bind(tenant),
  ]);
  const done = new Set(finished.results.map((r) => r.shard));
  if (!all.every((s) => done.has(s.name))) return all;
  const names = new Set(named.results.map((r) => r.shard));
  return all.filter((s) => names.has(s.name));
}

/** The directory's shard for each of `treeIds` that has a row. */
export async function ownersOf(env: Env, treeIds: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const dir = directoryDb(env);
  for (let i = 0; i < treeIds.length; i += 100) {
    const chunk = treeIds.slice(i, i + 100);
    const rows = await dir
      .prepare(`SELECT tree_id, shard FROM tree_directory WHERE tree_id IN (${chunk.map((_, j) => `?${j + 1}`).join(", ")})`)
      .bind(...chunk)
      .all<Pick<DirectoryRecord, "tree_id" | "shard">>();
    for (const r of rows.results) out.set(r.tree_id, r.shard);
  }
  return out;
}
