import { API_FRAME_KEY } from "../../core/protocol";
import type { AnswerRow } from "./answers";
import type { LeftJoined, NodeRecord, TreeRecord } from "./schema";

/**
 * The reads behind "why did this miss": a probe that rides in the exact
 * lookup's own statement (before the response, no extra query), and the
 * divergence read (one statement, after the response).
 */

/** Most recorded children of the fork a divergence read returns (the most observed first). */
export const DIVERGENCE_CHILDREN = 20;
/** Most of the tenant's trees of the request's API a new tree's frame is compared with (the most recently hit first). */
export const DIVERGENCE_TREES = 20;

/** What the probe says about a request whose path has no servable answer: how many of its nodes are recorded, and whether its tree is. */
export interface PathProbe {
  depth: number;
  tree: boolean;
}

/**
 * The exact lookup's query (ANSWERS_SQL: the assistant children of h_n) with
 * one more row when none of them is servable: the deepest recorded node of
 * the request's path (?2, a JSON array of its hashes, each a primary-key
 * lookup) and whether its tree (?3) is recorded. One statement: a hit reads
 * exactly what ANSWERS_SQL reads (the probe's WHERE is false), and a miss adds
 * a few primary-key lookups inside the same query.
 */
export const PROBED_ANSWERS_SQL = `WITH a AS (SELECT hash, message, observations, finish_reason AS finishReason, prompt_tokens AS promptTokens,
    completion_tokens AS completionTokens, latency_ms AS latencyMs FROM nodes WHERE parent = ?1 AND role = 'assistant')
  SELECT hash, message, observations, finishReason, promptTokens, completionTokens, latencyMs, NULL AS probeDepth, NULL AS probeTree FROM a
  UNION ALL
  SELECT NULL, NULL, 0, NULL, 0, 0, 0,
    coalesce((SELECT max(depth) FROM nodes WHERE hash IN (SELECT value FROM json_each(?2))), 0),
    EXISTS (SELECT 1 FROM trees WHERE id = ?3)
  WHERE NOT EXISTS (SELECT 1 FROM a WHERE observations > 0)
  ORDER BY hash`;

type ProbedRow = AnswerRow & { probeDepth: number | null; probeTree: number | null };

/** The probed lookup as a statement (run alone or in a batch; read it with `probedFrom`). */
export function probedAnswersStatement(db: D1Database | D1DatabaseSession, key: string, treeId: string, pathHashes: readonly string[]): D1PreparedStatement {
  return db.prepare(PROBED_ANSWERS_SQL).bind(key, JSON.stringify(pathHashes), treeId);
}

/** The answer rows and the probe (null when some answer is servable) of a probed lookup's result. */
export function probedFrom(result: D1Result<ProbedRow>): { rows: AnswerRow[]; probe: PathProbe | null } {
  let probe: PathProbe | null = null;
  const rows: AnswerRow[] = [];
  for (const row of result.results) {
    if (row.probeTree !== null && row.probeTree !== undefined) probe = { depth: row.probeDepth ?? 0, tree: row.probeTree === 1 };
    else rows.push(row);
  }
  return { rows, probe };
}

/**
 * One row of the divergence read: a node's or a tree's columns, the ones its kind does not select null
 * (`hash` is the tree's id for `tree` and `frame`, `message` the tree's frame for `frame`).
 */
type DivergenceRow = { kind: "tree" | "deepest" | "child" | "frame" } & Pick<NodeRecord, "hash"> &
  LeftJoined<Pick<NodeRecord, "depth" | "role" | "message" | "observations"> & Pick<TreeRecord, "model">>;

/** What the divergence read found (see src/engine/explain/explanation.ts DivergenceFacts). */
export interface DivergenceRead {
  treeExists: boolean;
  depth: number;
  children: Array<{ hash: string; role: string; json: string; observations: number }>;
  trees: Array<{ id: string; model: string; frame: string }>;
}

/**
 * One statement: whether the tree was recorded, the deepest recorded node of
 * the path, that node's recorded children (the request's own nodes left out;
 * DIVERGENCE_CHILDREN, the most observed first) and, for a tree that was not
 * recorded, the frames of the same tenant's trees in the namespace on the
 * request's API (?8, the frame's API_FRAME_KEY; null for Chat Completions, whose
 * frames have none: another API's tree has other fields, never one to change;
 * DIVERGENCE_TREES, trees_tenant_idx). Rows created before `before` (the
 * request's start) count, so that the miss's own recording, which may land
 * first, never explains it away; and so do the rows the request knew of
 * before its response whatever their time (?6: the path's nodes down to the
 * depth its lookup read, or a fast miss's isolate knew, and then its tree;
 * ?7: the fork's children, once a lookup read the store after the start),
 * since a recording made in the millisecond the request started is one its
 * lookup saw.
 */
const DIVERGENCE_SQL = `WITH p AS (SELECT value AS hash FROM json_each(?1)),
  tree AS (SELECT id FROM trees WHERE id = ?2 AND (created_at < ?5 OR ?6 IS NOT NULL)),
  deepest AS (SELECT hash, depth FROM nodes WHERE hash IN (SELECT hash FROM p) AND tree_id = ?2 AND (created_at < ?5 OR depth <= coalesce(?6, 0))
    ORDER BY depth DESC LIMIT 1)
  SELECT 'tree' AS kind, id AS hash, NULL AS depth, NULL AS role, NULL AS message, NULL AS observations, NULL AS model FROM tree
  UNION ALL SELECT 'deepest', hash, depth, NULL, NULL, NULL, NULL FROM deepest
  UNION ALL SELECT * FROM (SELECT 'child', c.hash, c.depth, c.role, c.message, c.observations, NULL FROM nodes c
    WHERE c.parent = coalesce((SELECT hash FROM deepest), ?2) AND (c.created_at < ?5 OR ?7 = 1) AND c.hash NOT IN (SELECT hash FROM p)
    ORDER BY c.observations DESC, c.hash LIMIT ${DIVERGENCE_CHILDREN})
  UNION ALL SELECT * FROM (SELECT 'frame', t.id, NULL, NULL, t.frame, NULL, t.model FROM trees t
    WHERE t.tenant = ?3 AND t.namespace = ?4 AND t.id <> ?2 AND NOT EXISTS (SELECT 1 FROM tree)
      AND iif(json_valid(t.frame), json_extract(t.frame, '$."${API_FRAME_KEY}"'), NULL) IS ?8
    ORDER BY t.last_hit_at DESC LIMIT ${DIVERGENCE_TREES})`;

/** What a miss knew of its path before its response, from its lookup's read or (a fast miss) its isolate's memory of the store. */
export interface KnownPath {
  /** How many of the path's nodes are known recorded (the tree with them); null when the tree is not known to be. */
  recorded: number | null;
  /** Whether a lookup read the store after the request started (then the fork's children count whatever their time). */
  lookedUp: boolean;
}

/** ?7: 1 when a lookup read the fork's children, unless the fork is the request's last message (there the miss records its own answer). */
function lookedUpFork(known: KnownPath | null, pathLength: number): number {
  return known?.lookedUp && known.recorded !== null && known.recorded < pathLength ? 1 : 0;
}

/** The divergence read of one miss: one indexed D1 statement on the tree's shard, scoped to the request's tenant. */
export async function readDivergence(
  db: D1Database,
  input: {
    treeId: string;
    tenant: string;
    namespace: string;
    pathHashes: readonly string[];
    before: number;
    known?: KnownPath | null;
    /** The request's API as its frame names it (API_FRAME_KEY; null for Chat Completions): a new tree is compared with that API's trees only. */
    api?: string | null;
  },
): Promise<DivergenceRead> {
  const known = input.known ?? null;
  const result = await db
    .prepare(DIVERGENCE_SQL)
    .bind(
      JSON.stringify(input.pathHashes),
      input.treeId,
      input.tenant,
      input.namespace,
      input.before,
      known?.recorded ?? null,
      lookedUpFork(known, input.pathHashes.length),
      input.api ?? null,
    )
    .all<DivergenceRow>();
  const read: DivergenceRead = { treeExists: false, depth: 0, children: [], trees: [] };
  for (const row of result.results) {
    if (row.kind === "tree") read.treeExists = true;
    else if (row.kind === "deepest") read.depth = row.depth ?? 0;
    else if (row.kind === "child")
      read.children.push({ hash: row.hash, role: row.role ?? "", json: row.message ?? "null", observations: row.observations ?? 0 });
    else read.trees.push({ id: row.hash, model: row.model ?? "", frame: row.message ?? "{}" });
  }
  return read;
}
