import { planStale, planSubtree, type PrunePlan, type StaleCriteria } from "./plan";
import type { NodeRecord, PreviewColumns } from "../tree/schema";

export type { StaleCriteria };
import { chunks, deleteNodes, deleteTemplates, directAccess, list, MAX_PARAMS, recount, type PruneAccess } from "./pages";
import { previewColumns, previewOf } from "../tree/node-preview";
import { pruneServedAnswers } from "../tree/served-answers";

export { PRUNE_BATCH_ROWS, PRUNE_STATEMENT_ROWS, type PruneAccess } from "./pages";

/** What to prune in one tree. */
export type PruneRequest = { kind: "subtree"; treeId: string; hash: string } | { kind: "stale"; treeId: string; criteria: StaleCriteria; dryRun: boolean };

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

/** Prune roots listed in a preview, at most. */
export const ROOTS_SHOWN = 50;

type RootRow = Pick<NodeRecord, "hash" | "depth" | "role" | "hits" | "created_at" | "last_hit_at"> & PreviewColumns;

const ROOT_COLUMNS = `hash, depth, role, hits, created_at, last_hit_at, ${previewColumns()}`;

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

/** The first ROOTS_SHOWN tops of the removed subtrees, with their previews (one bounded read). */
async function rootsOf(db: D1Database, treeId: string, plan: PrunePlan): Promise<PruneRoot[]> {
  const shown = plan.roots.slice(0, ROOTS_SHOWN).map((n) => n.hash);
  if (shown.length === 0) return [];
  const rows = await db
    .prepare(`SELECT ${ROOT_COLUMNS} FROM nodes WHERE hash IN (${list(shown.length)}) ORDER BY depth, hash`)
    .bind(...shown)
    .all<RootRow>();
  return rows.results.map((r) => rootOf(treeId, r));
}

/**
 * The learned templates a prune takes: those with confirming evidence (an
 * answer they were induced from or confirmed by, template_evidence) among the
 * removed nodes, and those with no recorded evidence at all (learned before
 * evidence was kept: they might rest on anything). Every other template of
 * the tree stays and keeps serving; its own evidence lies elsewhere. Only
 * learned templates count (anchor_depth >= 0, what the templates API and panel
 * list): a declared answer's evidence rows are no templates.
 */
async function templatesTaken(db: D1Database, treeId: string, plan: PrunePlan): Promise<{ evidenced: string[]; bare: number }> {
  const ids = new Set<string>();
  for (const part of chunks(
    plan.removed.map((n) => n.hash),
    MAX_PARAMS - 1,
  )) {
    const rows = await db
      .prepare(`SELECT DISTINCT template_id FROM template_evidence WHERE answer_hash IN (${list(part.length, 2)}) AND tree_id = ?1`)
      .bind(treeId, ...part)
      .all<{ template_id: string }>();
    for (const r of rows.results) ids.add(r.template_id);
  }
  const bare = await db
    .prepare(
      `SELECT count(*) AS n FROM templates t WHERE tree_id = ?1 AND t.anchor_depth >= 0 AND NOT EXISTS (SELECT 1 FROM template_evidence e WHERE e.template_id = t.id)`,
    )
    .bind(treeId)
    .first<{ n: number }>();
  return { evidenced: [...ids], bare: bare?.n ?? 0 };
}

/** What a plan would remove (read-only). */
async function outcomeOf(db: D1Database, treeId: string, plan: PrunePlan): Promise<PruneOutcome & { evidenced: string[] }> {
  if (plan.removed.length === 0) return { trees: 0, nodes: 0, answers: 0, templates: 0, roots: [], evidenced: [] };
  const taken = await templatesTaken(db, treeId, plan);
  return {
    trees: 1,
    nodes: plan.removed.length,
    answers: plan.removed.filter((n) => n.answer).length,
    templates: taken.evidenced.length + taken.bare,
    roots: await rootsOf(db, treeId, plan),
    evidenced: taken.evidenced,
  };
}

/**
 * Runs a plan in pages (src/store/prune/pages.ts): first the templates it
 * takes (their evidence, then each template left without any), then the
 * nodes in batches of whole sibling groups, deepest first, each with the
 * learning observations of its answers; then the tree's node count. No
 * statement touches more than PRUNE_STATEMENT_ROWS rows, and through the
 * tree's writer each page is its own queued write, so recordings run between
 * pages; a page re-checks every row it deletes, so the plan is the most a
 * prune removes. `criteria` is the stale prune's (null: a subtree's).
 */
async function execute(access: PruneAccess, treeId: string, plan: PrunePlan, criteria: StaleCriteria | null): Promise<PruneResult> {
  const preview = await outcomeOf(await access.read(), treeId, plan);
  const { evidenced, ...outcome } = preview;
  if (plan.removed.length === 0) return { ...outcome, changedKeys: [] };
  const templates = await deleteTemplates(access, treeId, evidenced);
  const removed = await deleteNodes(access, treeId, plan, criteria);
  await recount(access, treeId);
  return { ...outcome, trees: removed.nodes > 0 ? 1 : 0, nodes: removed.nodes, answers: removed.answers, templates, changedKeys: removed.changedKeys };
}

/** What a stale prune of one tree would remove (read-only, in pages). */
export async function previewStale(db: D1Database, treeId: string, criteria: StaleCriteria): Promise<PruneOutcome> {
  const { evidenced: _, ...outcome } = await outcomeOf(db, treeId, await planStale(db, treeId, criteria));
  return outcome;
}

/** Removes the stale paths of one tree in pages and recounts it (`db` alone: nothing else writes the tree meanwhile). */
export async function pruneStale(db: D1Database, treeId: string, criteria: StaleCriteria): Promise<PruneResult> {
  return runPrune(directAccess(db), { kind: "stale", treeId, criteria, dryRun: false });
}

/** What removing a node and everything under it would take (read-only); null when the node is not in the tree. */
export async function previewSubtree(db: D1Database, treeId: string, hash: string): Promise<PruneOutcome | null> {
  const plan = await planSubtree(db, treeId, hash);
  if (!plan) return null;
  const { evidenced: _, ...outcome } = await outcomeOf(db, treeId, plan);
  return outcome;
}

/**
 * Removes a node and everything under it (walking down the indexed `parent`
 * column in pages), the templates whose evidence lies there, and recounts the
 * tree (`db` alone: nothing else writes the tree meanwhile).
 */
export async function pruneSubtree(db: D1Database, treeId: string, hash: string): Promise<PruneResult> {
  return runPrune(directAccess(db), { kind: "subtree", treeId, hash });
}

/**
 * Runs one prune request through `access`: the tree's Durable Object passes
 * one that queues each page with the tree's writes (src/store/objects/tree-writer.ts).
 */
export async function runPrune(access: PruneAccess, request: PruneRequest): Promise<PruneResult> {
  const db = await access.read();
  if (request.kind === "subtree") {
    const plan = await planSubtree(db, request.treeId, request.hash);
    if (!plan) return { trees: 0, nodes: 0, answers: 0, templates: 0, roots: [], changedKeys: [] };
    return execute(access, request.treeId, plan, null);
  }
  if (request.dryRun) return { ...(await previewStale(db, request.treeId, request.criteria)), changedKeys: [] };
  const result = await execute(access, request.treeId, await planStale(db, request.treeId, request.criteria), request.criteria);
  // Template answers kept for chaining (served-answers.ts) age out with the same cutoff, served before it.
  if (request.criteria.cutoff !== null) await pruneServedAnswers(access.write, request.treeId, request.criteria.cutoff);
  return result;
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
