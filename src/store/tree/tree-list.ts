import { encodeCursor } from "./cursor";
import { previewColumns, previewOf } from "./node-preview";
import { tenantParam, type Scope } from "./scope";
import type { NodeRecord, PreviewColumns, TreeRecord } from "./schema";

/** A tree as the API lists it. */
export interface TreeSummary {
  id: string;
  tenant: string;
  namespace: string;
  model: string;
  tools: string[];
  node_count: number;
  hits: number;
  misses: number;
  bypasses: number;
  hit_rate: number | null;
  prompt_tokens_saved: number;
  completion_tokens_saved: number;
  latency_saved_ms: number;
  created_at: number;
  last_hit_at: number | null;
}

type TreeRowRaw = Pick<
  TreeRecord,
  | "id"
  | "tenant"
  | "namespace"
  | "model"
  | "node_count"
  | "hits"
  | "misses"
  | "bypasses"
  | "prompt_tokens_saved"
  | "completion_tokens_saved"
  | "latency_saved_ms"
  | "created_at"
  | "last_hit_at"
> & { tool_names: string | null; activity: number; frame?: string };

const TREE_COLUMNS = `id, tenant, namespace, model, node_count, hits, misses, bypasses, prompt_tokens_saved,
  completion_tokens_saved, latency_saved_ms, created_at, last_hit_at, coalesce(last_hit_at, created_at) AS activity,
  (SELECT json_group_array(coalesce(CASE WHEN d.type = 'object' THEN json_extract(d.value, '$.name') END, json_extract(t.value, '$.function.name'), json_extract(t.value, '$.name'), json_extract(t.value, '$.type')))
     FROM json_each(CASE WHEN json_valid(trees.frame) THEN trees.frame END, '$.tools') AS t
     -- A Gemini tool is a list of functionDeclarations: one name each (read only from a list of objects).
     LEFT JOIN json_each(CASE WHEN t.type = 'object' AND json_type(t.value, '$.functionDeclarations') = 'array' THEN t.value END, '$.functionDeclarations') AS d) AS tool_names`;

function treeOf(row: TreeRowRaw): TreeSummary {
  const decided = row.hits + row.misses;
  return {
    id: row.id,
    tenant: row.tenant,
    namespace: row.namespace,
    model: row.model,
    tools: row.tool_names ? (JSON.parse(row.tool_names) as Array<string | null>).map((n) => n ?? "?") : [],
    node_count: row.node_count,
    hits: row.hits,
    misses: row.misses,
    bypasses: row.bypasses,
    hit_rate: decided > 0 ? row.hits / decided : null,
    prompt_tokens_saved: row.prompt_tokens_saved,
    completion_tokens_saved: row.completion_tokens_saved,
    latency_saved_ms: row.latency_saved_ms,
    created_at: row.created_at,
    last_hit_at: row.last_hit_at,
  };
}

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

/** Newest activity first, then id descending: the order of the list and of its cursor. */
function byActivity(a: TreeRowRaw, b: TreeRowRaw): number {
  return b.activity - a.activity || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
}

/**
 * Trees of one tenant (or of all when `tenant` is null), newest activity
 * first, keyset-paginated on (activity, id). With several shards, each
 * returns its first `limit + 1` after the cursor and the pages merge: the
 * cursor is the same whatever shard a tree lives in. `owners` (the tree
 * directory) drops a row read from a shard the directory does not name for
 * its tree (a move's copy or not yet drained source): each tree is listed once.
 */
export async function listTrees(
  from: ReadonlyArray<{ name: string; db: D1Database }>,
  q: { scope: Scope; namespace?: string; limit: number; after?: [number, string] },
  owners?: (treeIds: string[]) => Promise<Map<string, string>>,
): Promise<Page<TreeSummary>> {
  const pages = await Promise.all(
    from.map(async ({ name, db }) => {
      const page = await db
        .prepare(
          `SELECT ${TREE_COLUMNS} FROM trees
       WHERE (?1 IS NULL OR tenant = ?1) AND (?2 IS NULL OR namespace = ?2)
         AND (?3 IS NULL OR coalesce(last_hit_at, created_at) < ?3 OR (coalesce(last_hit_at, created_at) = ?3 AND id < ?4))
       ORDER BY activity DESC, id DESC LIMIT ?5`,
        )
        .bind(tenantParam(q.scope), q.namespace ?? null, q.after?.[0] ?? null, q.after?.[1] ?? null, q.limit + 1)
        .all<TreeRowRaw>();
      return { name, rows: page.results };
    }),
  );
  const more = pages.some((p) => p.rows.length > q.limit);
  let rows = pages.flatMap((p) => p.rows.map((row) => ({ row, shard: p.name })));
  if (owners && pages.length > 1) {
    const owner = await owners(rows.map((r) => r.row.id));
    rows = rows.filter((r) => (owner.get(r.row.id) ?? r.shard) === r.shard);
  }
  const sorted = rows.map((r) => r.row).sort(byActivity);
  const page = sorted.slice(0, q.limit);
  const last = page[page.length - 1];
  return { data: page.map(treeOf), next_cursor: (sorted.length > q.limit || more) && last ? encodeCursor([last.activity, last.id]) : null };
}

/**
 * One tree with its full frame, if the scope may see it. A frame that is not a JSON object (a damaged row)
 * reads as `{}` with `damaged: true`: the tree is still listed and readable, and the export refuses it (its
 * lines would lose the frame, the tools and parameters the answers were recorded under).
 */
export async function readTree(
  db: D1Database,
  treeId: string,
  scope: Scope,
): Promise<(TreeSummary & { frame: Record<string, unknown>; damaged?: true }) | null> {
  const row = await db
    .prepare(`SELECT ${TREE_COLUMNS}, frame FROM trees WHERE id = ?1 AND (?2 IS NULL OR tenant = ?2)`)
    .bind(treeId, tenantParam(scope))
    .first<TreeRowRaw>();
  if (!row) return null;
  const frame = frameOf(row.frame ?? "{}");
  return frame ? { ...treeOf(row), frame } : { ...treeOf(row), frame: {}, damaged: true };
}

/** A stored frame as its object; null when it is not a JSON object. */
function frameOf(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** A node as one level of a tree lists it. */
export interface NodeSummary {
  hash: string;
  parent: string;
  depth: number;
  role: string;
  preview: string;
  observations: number;
  hits: number;
  /** Children, counted up to CHILD_COUNT_CAP (a larger fan-out shows as the cap). */
  child_count: number;
  /** Hits and last hit of this node's recorded answers: the traffic through a non-answer node. */
  answer_hits: number;
  answer_last_hit_at: number | null;
  created_at: number;
  last_hit_at: number | null;
}

/** Child counts and answer sums read at most this many index entries per node. */
export const CHILD_COUNT_CAP = 1000;

/** The NodeSummary columns of a node `n` (its preview slices, child count and answer sums), as CHILDREN_SQL and the subtree read select them. */
export const SUMMARY_COLUMNS = `n.rowid AS rid, n.hash, n.parent, n.depth, n.role, n.observations, n.hits, n.created_at, n.last_hit_at,
    ${previewColumns("n.")},
    (SELECT count(*) FROM (SELECT 1 FROM nodes c WHERE c.parent = n.hash LIMIT ${CHILD_COUNT_CAP})) AS child_count,
    (SELECT coalesce(sum(a.hits), 0) FROM (SELECT c.hits, c.role, c.observations FROM nodes c WHERE c.parent = n.hash LIMIT ${CHILD_COUNT_CAP}) AS a
       WHERE a.role = 'assistant' AND a.observations > 0) AS answer_hits,
    (SELECT max(a.last_hit_at) FROM (SELECT c.last_hit_at, c.role, c.observations FROM nodes c WHERE c.parent = n.hash LIMIT ${CHILD_COUNT_CAP}) AS a
       WHERE a.role = 'assistant' AND a.observations > 0) AS answer_last_hit_at`;

/**
 * One level: the children of `parent`, in insertion order, keyset-paginated on
 * rowid so that every page is one range of nodes_parent_idx (parent, rowid),
 * whatever the fan-out or the size of the tree.
 */
export const CHILDREN_SQL = `SELECT ${SUMMARY_COLUMNS}
  FROM nodes n WHERE n.parent = ?1 AND n.rowid > ?2 ORDER BY n.rowid LIMIT ?3`;

/** A row of SUMMARY_COLUMNS. */
export interface ChildRow
  extends Pick<NodeRecord, "hash" | "parent" | "depth" | "role" | "observations" | "hits" | "created_at" | "last_hit_at">,
    PreviewColumns {
  rid: number;
  child_count: number;
  answer_hits: number;
  answer_last_hit_at: number | null;
}

/** A NodeSummary from a row of SUMMARY_COLUMNS. */
export function summaryOf(r: ChildRow): NodeSummary {
  return {
    hash: r.hash,
    parent: r.parent,
    depth: r.depth,
    role: r.role,
    preview: previewOf(r.role, r.content, r.tool_calls, r.tool_call_id),
    observations: r.observations,
    hits: r.hits,
    child_count: r.child_count,
    answer_hits: r.answer_hits,
    answer_last_hit_at: r.answer_last_hit_at,
    created_at: r.created_at,
    last_hit_at: r.last_hit_at,
  };
}

/** The children of `parent` (a node hash, or the tree id for the first level). */
export async function listChildren(db: D1Database, parent: string, limit: number, afterRowid = 0): Promise<Page<NodeSummary>> {
  const rows = await db
    .prepare(CHILDREN_SQL)
    .bind(parent, afterRowid, limit + 1)
    .all<ChildRow>();
  const page = rows.results.slice(0, limit);
  const last = page[page.length - 1];
  return {
    data: page.map(summaryOf),
    next_cursor: rows.results.length > limit && last ? encodeCursor([last.rid]) : null,
  };
}
