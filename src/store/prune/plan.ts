import type { NodeRecord } from "../tree/schema";

/**
 * A recorded answer is stale when its last hit (or its recording, if never hit)
 * is before `cutoff` AND it has fewer than `minHits` hits; a null criterion is
 * left out. At least one must be set.
 */
export interface StaleCriteria {
  cutoff: number | null;
  minHits: number | null;
}

/**
 * What a prune removes, worked out from pages of the tree's nodes (never one
 * recursive statement over the whole tree): each page reads at most
 * PLAN_PAGE rows of (hash, parent, role, counters) through an index, and the
 * walk up to the live nodes' ancestors (stale) or down the subtree runs in
 * memory, in the tree's Durable Object or the Worker.
 */

/** Rows one read takes. */
export const PLAN_PAGE = 500;
/** Parents whose children one read of a subtree takes. */
const PARENTS_PER_READ = 50;

/** A node as a plan sees it. */
export interface PlanNode {
  hash: string;
  parent: string;
  depth: number;
  answer: boolean;
  /** An assistant message: its parent is a key whose answer set the prune may change. */
  assistant: boolean;
  /** Its observations when planned: a page keeps a node a recording observed again since. */
  observations: number;
}

/**
 * The nodes a prune removes, ancestors before descendants, and the tops of
 * the removed subtrees. A plan is read while records may still land: each
 * delete checks its rows again (src/store/prune/pages.ts), so the plan is the
 * most a prune removes.
 */
export interface PrunePlan {
  removed: PlanNode[];
  /** Removed nodes whose parent stays (or is the tree root): the subtrees' tops. */
  roots: PlanNode[];
}

type Row = { r: number } & Pick<NodeRecord, "hash" | "parent" | "depth" | "role" | "observations" | "hits" | "created_at" | "last_hit_at">;

const COLUMNS = `rowid AS r, hash, parent, depth, role, observations, hits, created_at, last_hit_at`;

function planNode(row: Row): PlanNode {
  return {
    hash: row.hash,
    parent: row.parent,
    depth: row.depth,
    answer: row.role === "assistant" && row.observations > 0,
    assistant: row.role === "assistant",
    observations: row.observations,
  };
}

/** The stale prune's liveness, as in the SQL it replaces: a fresh or often-hit answer, or (given an age) any other recent node. */
export function isLive(row: Omit<Row, "r" | "hash" | "parent" | "depth">, c: StaleCriteria): boolean {
  if (row.role === "assistant" && row.observations > 0) {
    const old = c.cutoff === null || (row.last_hit_at ?? row.created_at) < c.cutoff;
    const rare = c.minHits === null || row.hits < c.minHits;
    return !(old && rare);
  }
  return c.cutoff !== null && row.created_at >= c.cutoff;
}

function byDepth(a: PlanNode, b: PlanNode): number {
  return a.depth - b.depth || (a.hash < b.hash ? -1 : a.hash > b.hash ? 1 : 0);
}

/**
 * The stale plan of one tree: every node that leads to no live node. Reads
 * the tree's nodes in pages of its (tree_id, depth) index, then keeps each
 * live node and its ancestors; the rest goes, as whole subtrees.
 */
export async function planStale(db: D1Database, treeId: string, criteria: StaleCriteria): Promise<PrunePlan> {
  const nodes = new Map<string, PlanNode>();
  const live: string[] = [];
  let cursor = { depth: -1, r: 0 };
  for (;;) {
    const page = await db
      .prepare(`SELECT ${COLUMNS} FROM nodes WHERE tree_id = ?1 AND (depth > ?2 OR (depth = ?2 AND rowid > ?3)) ORDER BY depth, rowid LIMIT ${PLAN_PAGE}`)
      .bind(treeId, cursor.depth, cursor.r)
      .all<Row>();
    for (const row of page.results) {
      nodes.set(row.hash, planNode(row));
      if (isLive(row, criteria)) live.push(row.hash);
    }
    const last = page.results[page.results.length - 1];
    if (!last || page.results.length < PLAN_PAGE) break;
    cursor = { depth: last.depth, r: last.r };
  }
  const keep = new Set<string>();
  for (const hash of live) {
    let at: string | undefined = hash;
    while (at !== undefined && !keep.has(at) && nodes.has(at)) {
      keep.add(at);
      at = nodes.get(at)?.parent;
    }
  }
  const removed = [...nodes.values()].filter((n) => !keep.has(n.hash)).sort(byDepth);
  const gone = new Set(removed.map((n) => n.hash));
  return { removed, roots: removed.filter((n) => !gone.has(n.parent)) };
}

/** The plan that removes `hash` and everything under it (null when the node is not in the tree), walking down the parent index. */
export async function planSubtree(db: D1Database, treeId: string, hash: string): Promise<PrunePlan | null> {
  const top = await db.prepare(`SELECT ${COLUMNS} FROM nodes WHERE hash = ?2 AND tree_id = ?1`).bind(treeId, hash).first<Row>();
  if (!top) return null;
  const root = planNode(top);
  const removed: PlanNode[] = [root];
  let frontier = [root.hash];
  while (frontier.length > 0) {
    const next: string[] = [];
    for (let i = 0; i < frontier.length; i += PARENTS_PER_READ) {
      const parents = frontier.slice(i, i + PARENTS_PER_READ);
      const page = await db
        .prepare(`SELECT ${COLUMNS} FROM nodes WHERE parent IN (${parents.map((_, j) => `?${j + 2}`).join(", ")}) AND tree_id = ?1`)
        .bind(treeId, ...parents)
        .all<Row>();
      for (const row of page.results) {
        removed.push(planNode(row));
        next.push(row.hash);
      }
    }
    frontier = next;
  }
  return { removed: removed.sort(byDepth), roots: [root] };
}

/**
 * The removed nodes in batches of about `rows`, each batch whole sibling
 * groups (every removed child of one parent together), deepest first: a
 * batch is one D1 transaction, so a reader sees a node's answers all before
 * or all after the prune, never a mixture the policy would judge otherwise;
 * and a node is deleted only after every planned node under it, so that at
 * every moment between two batches each stored node still has all its
 * ancestors (what a recording landing between them relies on: src/store/prune/pages.ts).
 */
export function batchesOf(removed: readonly PlanNode[], rows: number): PlanNode[][] {
  const groups = new Map<string, PlanNode[]>();
  for (const n of removed) {
    const group = groups.get(n.parent);
    if (group) group.push(n);
    else groups.set(n.parent, [n]);
  }
  // Siblings share a depth (their parent's + 1): ordering the groups by it orders the batches.
  const ordered = [...groups.values()].sort((a, b) => b[0].depth - a[0].depth);
  const out: PlanNode[][] = [];
  let current: PlanNode[] = [];
  for (const group of ordered) {
    if (current.length > 0 && current.length + group.length > rows) {
      out.push(current);
      current = [];
    }
    current.push(...group);
  }
  if (current.length > 0) out.push(current);
  return out;
}
