import { previewColumns, previewOf } from "./node-preview";
import type { NodeRecord, PreviewColumns } from "./schema";

/** A node whose message contains the search text, with the path that leads to it. */
export interface SearchMatch {
  hash: string;
  depth: number;
  role: string;
  preview: string;
  /** The hashes from depth 1 down to the match itself, for opening the branch view there. */
  path: string[];
}

type MatchRow = Pick<NodeRecord, "hash" | "depth" | "role"> & PreviewColumns;

/**
 * The first `limit` nodes of a tree (shallowest first) whose stored message
 * contains `text`, case-insensitively: its text, a tool's name or a tool
 * call's arguments (all are in the canonical message JSON). One pass over the
 * tree's nodes (nodes_tree_idx), then one recursive walk up from the matches.
 */
export async function searchTree(db: D1Database, treeId: string, text: string, limit: number): Promise<SearchMatch[]> {
  const needle = text.toLowerCase();
  const matches = await db
    .prepare(
      `SELECT hash, depth, role, ${previewColumns()}
       FROM nodes WHERE tree_id = ?1 AND instr(lower(message), ?2) > 0 ORDER BY depth, rowid LIMIT ?3`,
    )
    .bind(treeId, needle, limit)
    .all<MatchRow>();
  if (matches.results.length === 0) return [];
  const hashes = matches.results.map((m) => m.hash);
  const chains = await db
    .prepare(
      `WITH RECURSIVE chain(match, hash, parent, depth) AS (
         SELECT hash, hash, parent, depth FROM nodes WHERE hash IN (SELECT value FROM json_each(?1))
         UNION ALL
         SELECT c.match, n.hash, n.parent, n.depth FROM chain c JOIN nodes n ON n.hash = c.parent
       ) SELECT match, hash FROM chain ORDER BY match, depth`,
    )
    .bind(JSON.stringify(hashes))
    .all<{ match: string; hash: string }>();
  const paths = new Map<string, string[]>();
  for (const row of chains.results) paths.set(row.match, [...(paths.get(row.match) ?? []), row.hash]);
  return matches.results.map((m) => ({
    hash: m.hash,
    depth: m.depth,
    role: m.role,
    preview: previewOf(m.role, m.content, m.tool_calls, m.tool_call_id),
    path: paths.get(m.hash) ?? [m.hash],
  }));
}
