import { DECLARED_ANCHOR } from "../templates/declared";
import type { NodeRecord } from "../tree/schema";
import { batchesOf, type PlanNode, type PrunePlan, type StaleCriteria } from "./plan";

/**
 * The writes of a prune, page by page. In the tree's writer each page (one
 * D1 call) is its own item of the writer's queue, so recordings run between
 * pages and no prune holds the writer for longer than one page.
 *
 * Why a recording between two pages can neither be lost nor orphaned:
 * - Pages delete the deepest nodes first (batchesOf): between two pages every
 *   stored node still has all its ancestors, which is what a recording relies
 *   on (src/store/tree/record.ts inserts the path nodes it does not find).
 * - A page deletes a planned node only if, in the same statement, it has no
 *   child, has as many observations as when planned, and (stale prune) is
 *   not live by the criteria (the plan's own rule, src/store/prune/plan.ts
 *   isLive, which also sees hits counted since). A recording that hung a new
 *   child under a planned node, re-inserted a deleted one or observed a
 *   planned answer again keeps that node and, page after page, each of its
 *   ancestors: the tree ends as if the recording had landed after the prune.
 * - A page changes whole sibling groups in one transaction: a reader sees the
 *   answers at one key all before or all after it.
 */

/** How a prune reaches its tree's shard. */
export interface PruneAccess {
  /** The shard for the plan's reads, once every write queued before the prune is done. */
  read(): Promise<D1Database>;
  /** Runs one page of writes (one D1 call or batch), serialised with the tree's other writes. */
  write<T>(page: (db: D1Database) => Promise<T>): Promise<T>;
}

/**
 * Access through the tree's writer: the plan starts after every write queued
 * before it, and each page is its own item of the writer's queue (`serialised`),
 * the shard read again for each (a move may run between pages).
 */
export function queuedAccess(db: () => Promise<D1Database>, serialised: <T>(work: () => Promise<T>) => Promise<T>): PruneAccess {
  return { read: () => serialised(db), write: (page) => serialised(async () => page(await db())) };
}

/** Access to one database with nothing else writing the tree (tests, a preview). */
export function directAccess(db: D1Database): PruneAccess {
  return { read: async () => db, write: (page) => page(db) };
}

/**
 * Removed nodes per page (whole sibling groups: a page is one transaction of
 * statements that each change at most PRUNE_STATEMENT_ROWS rows). A
 * 1,000-row transaction holds the shard for milliseconds; a 100,000-node
 * sweep is then about 100 pages.
 */
export const PRUNE_BATCH_ROWS = 1000;
/** D1's bound-parameter limit per statement. */
export const MAX_PARAMS = 100;
/** Rows one prune statement changes at most. */
export const PRUNE_STATEMENT_ROWS = MAX_PARAMS;

/** The live rule of src/store/prune/plan.ts `isLive` in SQL, with the cutoff at ?2 and the minimum hits at ?3 (both null: nothing is live). */
const LIVE_SQL = `CASE WHEN role = 'assistant' AND observations > 0
    THEN NOT ((?2 IS NULL OR coalesce(last_hit_at, created_at) < ?2) AND (?3 IS NULL OR hits < ?3))
    ELSE (?2 IS NOT NULL AND created_at >= ?2) END`;

/** Nodes per delete: two parameters each (hash, planned observations), three for the tree and the criteria. */
const NODES_PER_DELETE = Math.floor((MAX_PARAMS - 3) / 2);

export function chunks<T>(items: readonly T[], size = MAX_PARAMS): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

export function list(n: number, from = 1): string {
  return Array.from({ length: n }, (_, i) => `?${i + from}`).join(", ");
}

/** A node a page's DELETE … RETURNING gave back. */
type RemovedRow = Pick<NodeRecord, "hash" | "parent" | "role" | "observations">;

/** The statements of one page: its nodes deepest first (one depth per statement), each kept when it gained a child or came alive; then the learning observations and upstream response ids of the nodes that went. */
function pageStatements(db: D1Database, treeId: string, page: readonly PlanNode[], criteria: StaleCriteria | null): D1PreparedStatement[] {
  const byDepth = new Map<number, PlanNode[]>();
  for (const n of page) {
    const level = byDepth.get(n.depth);
    if (level) level.push(n);
    else byDepth.set(n.depth, [n]);
  }
  const depths = [...byDepth.keys()].sort((a, b) => b - a);
  // `+tree_id`: the hash (primary key) finds each row; without the `+` SQLite may walk the tree's whole (tree_id, depth) index instead.
  const deletes = depths.flatMap((depth) =>
    chunks(byDepth.get(depth) ?? [], NODES_PER_DELETE).map((part) =>
      db
        .prepare(
          `DELETE FROM nodes WHERE hash IN (${part.map((_, i) => `?${4 + 2 * i}`).join(", ")}) AND +tree_id = ?1
             AND observations = CASE hash ${part.map((_, i) => `WHEN ?${4 + 2 * i} THEN ?${5 + 2 * i}`).join(" ")} END
             AND NOT EXISTS (SELECT 1 FROM nodes c WHERE c.parent = nodes.hash) AND NOT (${LIVE_SQL})
           RETURNING hash, parent, role, observations`,
        )
        .bind(treeId, criteria?.cutoff ?? null, criteria?.minHits ?? null, ...part.flatMap((n) => [n.hash, n.observations])),
    ),
  );
  const observations = chunks(page.map((n) => n.hash)).map((part) =>
    db
      .prepare(
        `DELETE FROM template_observations WHERE answer_hash IN (${list(part.length)}) AND NOT EXISTS (SELECT 1 FROM nodes n WHERE n.hash = template_observations.answer_hash)`,
      )
      .bind(...part),
  );
  // An upstream response id of an answer that went names nothing any more (it would not resolve either way).
  const upstreamIds = chunks(page.map((n) => n.hash)).map((part) =>
    db
      .prepare(
        `DELETE FROM upstream_responses WHERE answer_hash IN (${list(part.length)}) AND NOT EXISTS (SELECT 1 FROM nodes n WHERE n.hash = upstream_responses.answer_hash)`,
      )
      .bind(...part),
  );
  return [...deletes, ...observations, ...declaredEvidenceStatements(db, page), ...upstreamIds];
}

/**
 * The declared-answer evidence of the page's answers that went (rows of `templates` with anchor
 * DECLARED_ANCHOR, found by their key h_n, the answer's parent): evidence of an answer that is gone
 * would only fill its key's quota. Evidence of every answer that stays is kept.
 */
function declaredEvidenceStatements(db: D1Database, page: readonly PlanNode[]): D1PreparedStatement[] {
  const answers = page.filter((n) => n.assistant);
  return chunks(answers, Math.floor((MAX_PARAMS - 1) / 2)).map((part) => {
    const keys = [...new Set(part.map((n) => n.parent))];
    return db
      .prepare(
        `DELETE FROM templates WHERE lookup_key IN (${list(keys.length, 2)}) AND anchor_depth = ?1
           AND json_extract(pattern, '$.declared') IN (${list(part.length, 2 + keys.length)})
           AND NOT EXISTS (SELECT 1 FROM nodes n WHERE n.hash = json_extract(templates.pattern, '$.declared'))`,
      )
      .bind(DECLARED_ANCHOR, ...keys, ...part.map((n) => n.hash));
  });
}

/** What the node pages removed: counts and the keys (h_n) whose answer sets changed. */
export interface RemovedNodes {
  nodes: number;
  answers: number;
  changedKeys: string[];
}

/** Deletes the plan's nodes page by page (see the top of this file); each page is one `access.write`. */
export async function deleteNodes(access: PruneAccess, treeId: string, plan: PrunePlan, criteria: StaleCriteria | null): Promise<RemovedNodes> {
  const removed: RemovedRow[] = [];
  for (const page of batchesOf(plan.removed, PRUNE_BATCH_ROWS)) {
    const results = await access.write((db) => db.batch<RemovedRow>(pageStatements(db, treeId, page, criteria)));
    for (const r of results) removed.push(...(r.results ?? []));
  }
  const answers = removed.filter((r) => r.role === "assistant" && r.observations > 0).length;
  const changedKeys = [...new Set(removed.filter((r) => r.role === "assistant").map((r) => r.parent))];
  return { nodes: removed.length, answers, changedKeys };
}

/**
 * Deletes the learned templates a prune takes, a page each: those with evidence
 * among the plan's nodes (`evidenced`), then the learned ones with no evidence at all
 * (never a declared answer's evidence row, anchor DECLARED_ANCHOR: the node pages take those of the answers that go).
 */
export async function deleteTemplates(access: PruneAccess, treeId: string, evidenced: readonly string[]): Promise<number> {
  let templates = 0;
  for (const part of chunks(evidenced, MAX_PARAMS - 1)) {
    const [, dropped] = await access.write((db) =>
      db.batch([
        db.prepare(`DELETE FROM template_evidence WHERE template_id IN (${list(part.length)})`).bind(...part),
        db.prepare(`DELETE FROM templates WHERE id IN (${list(part.length, 2)}) AND tree_id = ?1`).bind(treeId, ...part),
      ]),
    );
    templates += dropped.meta.changes ?? 0;
  }
  for (;;) {
    const bare = await access.write((db) =>
      db
        .prepare(
          `DELETE FROM templates WHERE id IN (SELECT id FROM templates t WHERE tree_id = ?1
             AND t.anchor_depth >= 0 AND NOT EXISTS (SELECT 1 FROM template_evidence e WHERE e.template_id = t.id) LIMIT ${PRUNE_STATEMENT_ROWS})`,
        )
        .bind(treeId)
        .run(),
    );
    templates += bare.meta.changes ?? 0;
    if ((bare.meta.changes ?? 0) < PRUNE_STATEMENT_ROWS) break;
  }
  return templates;
}

/** Sets the tree's node count from its rows (a page of its own, after the deletes). */
export async function recount(access: PruneAccess, treeId: string): Promise<void> {
  await access.write((db) => db.prepare(`UPDATE trees SET node_count = (SELECT count(*) FROM nodes WHERE tree_id = ?1) WHERE id = ?1`).bind(treeId).run());
}
