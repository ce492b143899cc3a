import { SUMMARY_COLUMNS, summaryOf, type ChildRow, type NodeSummary } from "./tree-list";

/** Most levels below the start a subtree read walks. */
export const SUBTREE_MAX_DEPTH = 1000;

/**
 * The nodes below `start` (a node hash, or the tree id for the whole tree),
 * level by level and in insertion order within a level, down to `depth`
 * levels and at most `limit` nodes (the query reads `limit + 1` to tell a cut).
 *
 * One recursive query over nodes_parent_idx: the queue is ordered by (level,
 * rowid), so the rows are a breadth-first prefix and, when the limit cuts a
 * level, each parent keeps a rowid prefix of its children (the first ones the
 * children API would list). Each step reads at most `limit + 1` children of a
 * node, so a huge fan-out costs no more than the limit.
 * ?1 start, ?2 depth, ?3 limit + 1.
 */
export const SUBTREE_SQL = `WITH RECURSIVE sub(rid, hash, k) AS (
    SELECT rid, hash, 1 FROM (SELECT f.rowid AS rid, f.hash FROM nodes f WHERE f.parent = ?1 ORDER BY f.rowid LIMIT ?3)
    UNION ALL
    SELECT c.rowid, c.hash, s.k + 1 FROM sub s JOIN nodes c ON c.parent = s.hash
      AND c.rowid IN (SELECT x.rowid FROM nodes x WHERE x.parent = s.hash ORDER BY x.rowid LIMIT ?3)
      WHERE s.k < ?2
    ORDER BY 3, 1
    LIMIT ?3
  )
  SELECT sub.k AS level, ${SUMMARY_COLUMNS} FROM sub JOIN nodes n ON n.rowid = sub.rid ORDER BY sub.k, sub.rid`;

/** A subtree read: its nodes breadth-first, and whether the limit cut it. */
export interface Subtree {
  data: NodeSummary[];
  truncated: boolean;
}

/** The subtree below `start` (see SUBTREE_SQL): one D1 query. */
export async function readSubtree(db: D1Database, start: string, depth: number, limit: number): Promise<Subtree> {
  const rows = await db
    .prepare(SUBTREE_SQL)
    .bind(start, depth, limit + 1)
    .all<ChildRow & { level: number }>();
  return { data: rows.results.slice(0, limit).map(summaryOf), truncated: rows.results.length > limit };
}
