import { previewOf } from "./trajectory-messages";

/** What to prune in one tree. */
export type PruneRequest =
  | { kind: "subtree"; treeId: string; hash: string }
  | { kind: "stale"; treeId: string; criteria: StaleCriteria; dryRun: boolean };

/**
 * A recorded answer is stale when its last hit (or its recording, if never hit)
 * is before `cutoff` AND it has fewer than `minHits` hits; a null criterion is
 * left out. At least one must be set.
 */
export interface StaleCriteria {
  cutoff: number | null;
  minHits: number | null;
}

/** A node at the top of a subtree that a prune removes. */
export interface PruneRoot {
  tree_id: string;
  hash: string;
  depth: number;
  role: string;
  preview: string;
  hits: number;
  created_at: number;
  last_hit_at: number | null;
}

export interface PruneOutcome {
  trees: number;
  nodes: number;
  answers: number;
  /** Learned templates that go with the nodes (their evidence is among them). */
  templates: number;
  roots: PruneRoot[];
}

/**
 * A prune as run: its outcome, and the keys (h_n) whose answer sets it
 * changed (the parents of the removed answers), for the isolate's memory and
 * the colo layer to forget at once.
 */
export interface PruneResult extends PruneOutcome {
  changedKeys: string[];
}

/** The parents of the removed answers, read in the same batch (one transaction) as the deletes. */
function changedKeysSql(cte: string, removed: string): string {
  return `${cte} SELECT DISTINCT parent FROM nodes WHERE role = 'assistant' AND hash IN (${removed})`;
}

function keysOf(result: D1Result): string[] {
  return (result.results as Array<{ parent: string }>).map((r) => r.parent);
}

/** Prune roots listed in a preview, at most. */
export const ROOTS_SHOWN = 50;

/**
 * The nodes a stale prune keeps: every live node and its ancestors. A live
 * node is a recorded answer that is not stale, or (when an age is given) any
 * other node recorded after the cutoff. Everything else in the tree leads to
 * no live answer and goes, as whole subtrees.
 */
const KEEP_CTE = `WITH RECURSIVE live(h) AS (
    SELECT hash FROM nodes WHERE tree_id = ?1 AND (
      (role = 'assistant' AND observations > 0
        AND NOT ((?2 IS NULL OR coalesce(last_hit_at, created_at) < ?2) AND (?3 IS NULL OR hits < ?3)))
      OR (NOT (role = 'assistant' AND observations > 0) AND ?2 IS NOT NULL AND created_at >= ?2))
  ), keep(h) AS (
    SELECT h FROM live
    UNION
    SELECT n.parent FROM keep JOIN nodes n ON n.hash = keep.h WHERE n.parent <> ?1
  )`;

const SUBTREE_CTE = `WITH RECURSIVE sub(h) AS (
    SELECT hash FROM nodes WHERE hash = ?2 AND tree_id = ?1
    UNION ALL
    SELECT n.hash FROM nodes n JOIN sub ON n.parent = sub.h
  )`;

/**
 * The learned templates a prune takes: those with confirming evidence (an
 * answer they were induced from or confirmed by, template_evidence) among the
 * removed nodes `R`, and those with no recorded evidence at all (learned
 * before evidence was kept: they might rest on anything). Every other template
 * of the tree stays and keeps serving; its own evidence lies elsewhere.
 */
function dropPredicate(removed: string): string {
  return `tree_id = ?1 AND (EXISTS (SELECT 1 FROM template_evidence e WHERE e.template_id = templates.id AND e.answer_hash IN (${removed}))
    OR NOT EXISTS (SELECT 1 FROM template_evidence e WHERE e.template_id = templates.id))`;
}

/** The statements that drop those templates: their evidence first, then every template left without evidence. */
function dropTemplates(db: D1Database, cte: string, removed: string, params: readonly unknown[]): D1PreparedStatement[] {
  return [
    db.prepare(`${cte} DELETE FROM template_evidence WHERE template_id IN (SELECT id FROM templates WHERE ${dropPredicate(removed)})`).bind(...params),
    db.prepare(`DELETE FROM templates WHERE tree_id = ?1 AND NOT EXISTS (SELECT 1 FROM template_evidence e WHERE e.template_id = templates.id)`).bind(params[0]),
  ];
}

const STALE_REMOVED = `SELECT hash FROM nodes WHERE tree_id = ?1 AND hash NOT IN (SELECT h FROM keep)`;
const SUBTREE_REMOVED = `SELECT h FROM sub`;

const RECOUNT_SQL = `UPDATE trees SET node_count = (SELECT count(*) FROM nodes WHERE tree_id = ?1) WHERE id = ?1`;

interface RootRow {
  hash: string;
  depth: number;
  role: string;
  hits: number;
  created_at: number;
  last_hit_at: number | null;
  content: string | null;
  tool_calls: string | null;
  tool_call_id: string | null;
}

const ROOT_COLUMNS = `hash, depth, role, hits, created_at, last_hit_at, substr(json_extract(message, '$.content'), 1, 400) AS content,
  substr(json_extract(message, '$.tool_calls'), 1, 1000) AS tool_calls, json_extract(message, '$.tool_call_id') AS tool_call_id`;

function rootOf(treeId: string, r: RootRow): PruneRoot {
  return {
    tree_id: treeId,
    hash: r.hash,
    depth: r.depth,
    role: r.role,
    preview: previewOf(r.role, r.content, r.tool_calls, r.tool_call_id),
    hits: r.hits,
    created_at: r.created_at,
    last_hit_at: r.last_hit_at,
  };
}

function staleParams(treeId: string, c: StaleCriteria): [string, number | null, number | null] {
  return [treeId, c.cutoff, c.minHits];
}

/** What a stale prune of one tree would remove (read-only). */
export async function previewStale(db: D1Database, treeId: string, criteria: StaleCriteria): Promise<PruneOutcome> {
  const params = staleParams(treeId, criteria);
  const [counts, roots, dropped] = await db.batch([
    db
      .prepare(`${KEEP_CTE} SELECT count(*) AS nodes, coalesce(sum(role = 'assistant' AND observations > 0), 0) AS answers
        FROM nodes WHERE tree_id = ?1 AND hash NOT IN (SELECT h FROM keep)`)
      .bind(...params),
    db
      .prepare(`${KEEP_CTE} SELECT ${ROOT_COLUMNS} FROM nodes WHERE tree_id = ?1 AND hash NOT IN (SELECT h FROM keep)
        AND (parent = ?1 OR parent IN (SELECT h FROM keep)) ORDER BY depth, hash LIMIT ${ROOTS_SHOWN}`)
      .bind(...params),
    db.prepare(`${KEEP_CTE} SELECT count(*) AS templates FROM templates WHERE ${dropPredicate(STALE_REMOVED)}`).bind(...params),
  ]);
  const count = (counts.results[0] ?? { nodes: 0, answers: 0 }) as { nodes: number; answers: number };
  return {
    trees: count.nodes > 0 ? 1 : 0,
    nodes: count.nodes,
    answers: count.answers,
    templates: count.nodes > 0 ? ((dropped.results[0] as { templates: number } | undefined)?.templates ?? 0) : 0,
    roots: (roots.results as RootRow[]).map((r) => rootOf(treeId, r)),
  };
}

/** Removes the stale paths of one tree and recounts it. Run it through the tree's Durable Object. */
export async function pruneStale(db: D1Database, treeId: string, criteria: StaleCriteria): Promise<PruneResult> {
  const preview = await previewStale(db, treeId, criteria);
  if (preview.nodes === 0) return { ...preview, changedKeys: [] };
  const params = staleParams(treeId, criteria);
  const [changed, ...results] = await db.batch([
    db.prepare(changedKeysSql(KEEP_CTE, STALE_REMOVED)).bind(...params),
    ...dropTemplates(db, KEEP_CTE, STALE_REMOVED, params),
    db.prepare(`${KEEP_CTE} DELETE FROM template_observations WHERE tree_id = ?1 AND answer_hash NOT IN (SELECT h FROM keep)`).bind(...params),
    db.prepare(`${KEEP_CTE} DELETE FROM nodes WHERE tree_id = ?1 AND hash NOT IN (SELECT h FROM keep)`).bind(...params),
    db.prepare(RECOUNT_SQL).bind(treeId),
  ]);
  return { ...preview, nodes: results[3].meta.changes ?? preview.nodes, templates: results[1].meta.changes ?? preview.templates, changedKeys: keysOf(changed) };
}

/** What removing a node and everything under it would take (read-only); null when the node is not in the tree. */
export async function previewSubtree(db: D1Database, treeId: string, hash: string): Promise<PruneOutcome | null> {
  const root = await db.prepare(`SELECT ${ROOT_COLUMNS} FROM nodes WHERE hash = ?2 AND tree_id = ?1`).bind(treeId, hash).first<RootRow>();
  if (!root) return null;
  const [counts, dropped] = await db.batch([
    db.prepare(`${SUBTREE_CTE} SELECT count(*) AS nodes, coalesce(sum(role = 'assistant' AND observations > 0), 0) AS answers FROM nodes WHERE hash IN (SELECT h FROM sub)`).bind(treeId, hash),
    db.prepare(`${SUBTREE_CTE} SELECT count(*) AS templates FROM templates WHERE ${dropPredicate(SUBTREE_REMOVED)}`).bind(treeId, hash),
  ]);
  const count = counts.results[0] as { nodes: number; answers: number };
  const templates = (dropped.results[0] as { templates: number }).templates;
  return { trees: 1, nodes: count.nodes, answers: count.answers, templates, roots: [rootOf(treeId, root)] };
}

/**
 * Removes a node and everything under it (a recursive walk down the indexed
 * `parent` column), the templates whose evidence lies there, and recounts the
 * tree. Run it through the tree's Durable Object.
 */
export async function pruneSubtree(db: D1Database, treeId: string, hash: string): Promise<PruneResult> {
  const preview = await previewSubtree(db, treeId, hash);
  if (!preview) return { trees: 0, nodes: 0, answers: 0, templates: 0, roots: [], changedKeys: [] };
  const [changed, ...results] = await db.batch([
    db.prepare(changedKeysSql(SUBTREE_CTE, SUBTREE_REMOVED)).bind(treeId, hash),
    ...dropTemplates(db, SUBTREE_CTE, SUBTREE_REMOVED, [treeId, hash]),
    db.prepare(`${SUBTREE_CTE} DELETE FROM template_observations WHERE answer_hash IN (SELECT h FROM sub)`).bind(treeId, hash),
    db.prepare(`${SUBTREE_CTE} DELETE FROM nodes WHERE hash IN (SELECT h FROM sub)`).bind(treeId, hash),
    db.prepare(RECOUNT_SQL).bind(treeId),
  ]);
  return { ...preview, nodes: results[3].meta.changes ?? preview.nodes, templates: results[1].meta.changes ?? preview.templates, changedKeys: keysOf(changed) };
}

/** Runs one prune request (the Durable Object calls this, serialised with the tree's writes). */
export async function runPrune(db: D1Database, request: PruneRequest): Promise<PruneResult> {
  if (request.kind === "subtree") return pruneSubtree(db, request.treeId, request.hash);
  if (request.dryRun) return { ...(await previewStale(db, request.treeId, request.criteria)), changedKeys: [] };
  return pruneStale(db, request.treeId, request.criteria);
}

/** Adds the outcome of one tree to a running total (roots capped at ROOTS_SHOWN). */
export function addOutcome(total: PruneOutcome, one: PruneOutcome): PruneOutcome {
  return {
    trees: total.trees + (one.nodes > 0 ? 1 : 0),
    nodes: total.nodes + one.nodes,
    answers: total.answers + one.answers,
    templates: total.templates + one.templates,
    roots: [...total.roots, ...one.roots].slice(0, ROOTS_SHOWN),
  };
}
