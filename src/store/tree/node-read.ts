import type { NodeView } from "../../providers/node-view";
import { nodeMessageOf, nodeViewOf, pathMessagesOf, type TrajectoryMessage } from "../trajectories/messages";
import { inScope, tenantParam, type Scope } from "./scope";

/** One node in full. */
export interface NodeDetail {
  hash: string;
  parent: string;
  tree_id: string;
  depth: number;
  role: string;
  /** The message in its tree's API's shape (nodeMessageOf): an OpenAI or Anthropic message, a Responses node's items, a Gemini content; call ids as ordinals. Null for a damaged node. */
  message: TrajectoryMessage | null;
  /** Present (true) when the stored message cannot be read as its API's message (not JSON, not an object, another shape): never served, shown empty. */
  damaged?: true;
  /** What the message says, whatever its API (its provider's `nodeView`): what the dashboard shows. */
  view: NodeView;
  observations: number;
  hits: number;
  prompt_tokens: number;
  completion_tokens: number;
  finish_reason: string | null;
  latency_ms: number;
  created_at: number;
  last_hit_at: number | null;
}

/** A node row as D1 returns it: the detail's fields, with the message still as stored JSON. */
type NodeRowRaw = Omit<NodeDetail, "message" | "view"> & { message: string };

/** The API a tree was recorded through (`muscle-mem:api` of its frame, `t`), null for chat. */
const TREE_API = `json_extract(t.frame, '$."muscle-mem:api"')`;

const NODE_COLUMNS = `n.hash, n.parent, n.tree_id, n.depth, n.role, n.message, n.observations, n.hits, n.prompt_tokens,
  n.completion_tokens, n.finish_reason, n.latency_ms, n.created_at, n.last_hit_at`;

/** Where a node lives: its tree, the tree's tenant and API (null when there is no such node). */
export async function nodeOwner(db: D1Database, hash: string): Promise<{ treeId: string; tenant: string; api: string | null } | null> {
  const row = await db
    .prepare(`SELECT n.tree_id AS tree_id, t.tenant AS tenant, ${TREE_API} AS api FROM nodes n JOIN trees t ON t.id = n.tree_id WHERE n.hash = ?1`)
    .bind(hash)
    .first<{ tree_id: string; tenant: string; api: string | null }>();
  return row ? { treeId: row.tree_id, tenant: row.tenant, api: row.api } : null;
}

/** One node in full, if the scope may see it. */
export async function readNode(db: D1Database, hash: string, scope: Scope): Promise<NodeDetail | null> {
  const row = await db
    .prepare(`SELECT ${NODE_COLUMNS}, ${TREE_API} AS api FROM nodes n JOIN trees t ON t.id = n.tree_id WHERE n.hash = ?1 AND (?2 IS NULL OR t.tenant = ?2)`)
    .bind(hash, tenantParam(scope))
    .first<NodeRowRaw & { api: string | null }>();
  if (!row) return null;
  const { message, api, ...rest } = row;
  try {
    return { ...rest, message: nodeMessageOf(message, api), view: nodeViewOf(message, api) };
  } catch {
    // A damaged row (a bad migration, a hand edit): the rest of the node is still worth showing, and pruning.
    return { ...rest, message: null, view: { texts: [], calls: [], results: [], refusals: [] }, damaged: true };
  }
}

/** The nodes among `rows` whose stored message cannot be read as their API's message (readNode's `damaged`). */
function damagedOf(rows: readonly NodeRowRaw[], api: string | null): string[] {
  return rows
    .filter((r) => {
      try {
        nodeMessageOf(r.message, api);
        return false;
      } catch {
        return true;
      }
    })
    .map((r) => r.hash);
}

/**
 * The path from the root to `hash` as rows, root first: one recursive query
 * that follows `parent` through the primary key, so its cost is the depth.
 */
export async function readPathRows(db: D1Database, hash: string): Promise<NodeRowRaw[]> {
  const rows = await db
    .prepare(
      `WITH RECURSIVE up(h, k) AS (SELECT ?1, 0 UNION ALL SELECT n.parent, up.k + 1 FROM nodes n JOIN up ON n.hash = up.h WHERE up.k < 100000)
       SELECT ${NODE_COLUMNS} FROM up JOIN nodes n ON n.hash = up.h ORDER BY n.depth`,
    )
    .bind(hash)
    .all<NodeRowRaw>();
  return rows.results;
}

/** The path to a node as the message list its API sends (pathMessagesOf), if the scope may see the node. */
export async function readPath(
  db: D1Database,
  hash: string,
  scope: Scope,
): Promise<{ tree_id: string; messages: TrajectoryMessage[] | null; hashes: string[]; damaged?: string[] } | null> {
  const owner = await nodeOwner(db, hash);
  if (!owner || !inScope(scope, owner.tenant)) return null;
  const rows = await readPathRows(db, hash);
  const damaged = damagedOf(rows, owner.api);
  if (damaged.length > 0) return { tree_id: owner.treeId, messages: null, hashes: rows.map((r) => r.hash), damaged };
  return {
    tree_id: owner.treeId,
    messages: pathMessagesOf(
      rows.map((r) => r.message),
      owner.api,
    ),
    hashes: rows.map((r) => r.hash),
  };
}
