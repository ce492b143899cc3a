import { env } from "cloudflare:workers";
import { shards } from "../../src/store/shards/shards";

/** The shards of the `sharded` project (vitest.config.ts: D1_SHARDS). */
export const NAMES = ["DB", "DB_1", "DB_2", "DB_3"];

/** The D1 database bound as `name`. */
export function dbNamed(name: string): D1Database {
  const shard = shards(env).find((s) => s.name === name);
  if (!shard) throw new Error(`no shard ${name}`);
  return shard.db;
}

/** The shard the tree directory (in DB) names for a tree, or undefined when it has no row. */
export async function homeOf(treeId: string): Promise<string | undefined> {
  const row = await dbNamed("DB").prepare("SELECT shard FROM tree_directory WHERE tree_id = ?1").bind(treeId).first<{ shard: string }>();
  return row?.shard;
}

/** Rows of one tree in each of its tables, in one shard. */
export async function treeRows(
  name: string,
  treeId: string,
): Promise<{ trees: number; nodes: number; templates: number; evidence: number; observations: number }> {
  const db = dbNamed(name);
  const n = async (sql: string) => (await db.prepare(sql).bind(treeId).first<{ n: number }>())?.n ?? 0;
  return {
    trees: await n("SELECT count(*) AS n FROM trees WHERE id = ?1"),
    nodes: await n("SELECT count(*) AS n FROM nodes WHERE tree_id = ?1"),
    templates: await n("SELECT count(*) AS n FROM templates WHERE tree_id = ?1"),
    evidence: await n("SELECT count(*) AS n FROM template_evidence WHERE tree_id = ?1"),
    observations: await n("SELECT count(*) AS n FROM template_observations WHERE tree_id = ?1"),
  };
}
