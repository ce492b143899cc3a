/**
 * A tree's rows copied to another shard and deleted from one, in pages of at
 * most PAGE_ROWS rows per read and per write batch and D1's 100 bound
 * parameters per statement, never a shard's writer held for long. Nodes are
 * read walking down from the root through the `parent` index; the templates'
 * evidence and the learning observations of a page's answers go with it;
 * templates are paged by their index (tree_id, rowid). The one statement
 * larger than a page: the drain deletes each node's children in one DELETE
 * (as many rows as the node has children), so that a reader of the source
 * sees all of a node's answers or none; the copy needs no such unit (nobody
 * reads the target before the switch).
 *
 * Every page ends with a timer turn (src/core/timer-turn.ts): under
 * `wrangler dev` a move's chain of in-process D1 calls otherwise kept the
 * local Worker from answering anything until the move ended.
 */
import { breathe } from "../../core/timer-turn";
import type { NodeRecord } from "../tree/schema";

/** Rows one page reads (and writes). */
export const PAGE_ROWS = 100;

/** D1's bound-parameter limit per statement. */
const MAX_PARAMS = 100;

type Row = Record<string, unknown>;

/** What a copy or a drain touched, per table. */
export interface PageCounts {
  trees: number;
  nodes: number;
  templates: number;
  evidence: number;
  observations: number;
}

export function noCounts(): PageCounts {
  return { trees: 0, nodes: 0, templates: 0, evidence: 0, observations: 0 };
}

const IDENT = /^[a-z_]+$/;

/** `INSERT OR REPLACE` statements for `rows` of `table`, as many rows per statement as the parameter limit allows. */
function inserts(db: D1Database, table: string, rows: readonly Row[]): D1PreparedStatement[] {
  if (rows.length === 0) return [];
  const columns = Object.keys(rows[0]).filter((c) => IDENT.test(c));
  const perStatement = Math.max(1, Math.floor(MAX_PARAMS / columns.length));
  const out: D1PreparedStatement[] = [];
  for (let i = 0; i < rows.length; i += perStatement) {
    const chunk = rows.slice(i, i + perStatement);
    const values = chunk.map((_, r) => `(${columns.map((__, c) => `?${r * columns.length + c + 1}`).join(", ")})`).join(", ");
    const params = chunk.flatMap((row) => columns.map((c) => row[c] ?? null));
    out.push(db.prepare(`INSERT OR REPLACE INTO ${table} (${columns.join(", ")}) VALUES ${values}`).bind(...params));
  }
  return out;
}

function placeholders(n: number, from = 1): string {
  return Array.from({ length: n }, (_, i) => `?${i + from}`).join(", ");
}

/** Rows of `table` whose `column` is one of `keys` (keys in chunks under the parameter limit). */
async function rowsWhereIn(db: D1Database, table: string, column: string, keys: readonly string[]): Promise<Row[]> {
  const out: Row[] = [];
  for (let i = 0; i < keys.length; i += MAX_PARAMS) {
    const chunk = keys.slice(i, i + MAX_PARAMS);
    const page = await db
      .prepare(`SELECT * FROM ${table} WHERE ${column} IN (${placeholders(chunk.length)})`)
      .bind(...chunk)
      .all<Row>();
    out.push(...page.results);
  }
  return out;
}

/** Parents whose children one walk step reads (in pages of at most PAGE_ROWS rows). */
const PARENTS_PER_STEP = 50;

/** A node row as a page reads it: any of its columns, the walk's `hash` and `parent` among them. */
type NodeRow = Row & Pick<NodeRecord, "hash" | "parent">;

/** The children of `parents`, `columns` of each, in pages of at most PAGE_ROWS rows (by rowid, through the `parent` index). */
async function childrenOf(
  db: D1Database,
  treeId: string,
  parents: readonly string[],
  columns: string,
  visit: (page: NodeRow[]) => Promise<void>,
): Promise<void> {
  let after = 0;
  for (;;) {
    const page = await db
      .prepare(
        `SELECT rowid AS _rowid, ${columns} FROM nodes WHERE parent IN (${placeholders(parents.length, 3)}) AND tree_id = ?1 AND rowid > ?2 ORDER BY rowid LIMIT ${PAGE_ROWS}`,
      )
      .bind(treeId, after, ...parents)
      .all<NodeRow & { _rowid: number }>();
    if (page.results.length === 0) return;
    after = page.results[page.results.length - 1]._rowid;
    // SAFETY: withoutRowid drops only `_rowid`; the rows keep the `hash` and `parent` that `columns` always selects.
    await visit(page.results.map(withoutRowid) as NodeRow[]);
    await breathe();
    if (page.results.length < PAGE_ROWS) return;
  }
}

/**
 * Walks the tree down from its root, PARENTS_PER_STEP parents a step, giving
 * `visit` each step's children in pages of at most PAGE_ROWS rows and then
 * `done` the step's parents (their children all visited). Returns the nodes seen.
 */
async function walkDown(
  db: D1Database,
  treeId: string,
  columns: string,
  visit: (page: NodeRow[]) => Promise<void>,
  done: (parents: string[], children: NodeRow[]) => Promise<void> = async () => undefined,
): Promise<number> {
  let frontier = [treeId];
  let seen = 0;
  while (frontier.length > 0) {
    const next: string[] = [];
    for (let i = 0; i < frontier.length; i += PARENTS_PER_STEP) {
      const parents = frontier.slice(i, i + PARENTS_PER_STEP);
      const children: NodeRow[] = [];
      await childrenOf(db, treeId, parents, columns, async (page) => {
        await visit(page);
        children.push(...page);
      });
      if (children.length === 0) continue;
      await done(parents, children);
      seen += children.length;
      next.push(...children.map((n) => n.hash));
    }
    frontier = next;
  }
  return seen;
}

async function nodeCount(db: D1Database, treeId: string): Promise<number> {
  return (await db.prepare(`SELECT count(*) AS n FROM nodes WHERE tree_id = ?1`).bind(treeId).first<{ n: number }>())?.n ?? 0;
}

/**
 * Copies every row of `treeId` from `from` to `to` (`INSERT OR REPLACE`, so a
 * copy that starts again after a crash converges): the tree row, its nodes
 * with their evidence and observations (walking down from the root), then its
 * templates. Throws when the walk did not reach every node of the tree
 * (nodes whose parent is missing): the move stops before the switch.
 */
export async function copyTree(from: D1Database, to: D1Database, treeId: string): Promise<PageCounts> {
  const counts = noCounts();
  const tree = await from.prepare(`SELECT * FROM trees WHERE id = ?1`).bind(treeId).first<Row>();
  if (tree) {
    await to.batch(inserts(to, "trees", [tree]));
    counts.trees = 1;
  }
  await walkDown(from, treeId, "*", async (page) => {
    const hashes = page.map((n) => n.hash);
    const evidence = await rowsWhereIn(from, "template_evidence", "answer_hash", hashes);
    const observations = await rowsWhereIn(from, "template_observations", "answer_hash", hashes);
    const upstreamIds = await rowsWhereIn(from, "upstream_responses", "answer_hash", hashes);
    await to.batch([
      ...inserts(to, "nodes", page),
      ...inserts(to, "template_evidence", evidence),
      ...inserts(to, "template_observations", observations),
      ...inserts(to, "upstream_responses", upstreamIds),
    ]);
    counts.nodes += page.length;
    counts.evidence += evidence.length;
    counts.observations += observations.length;
  });
  const total = await nodeCount(from, treeId);
  if (total !== counts.nodes) throw new Error(`tree ${treeId}: copied ${counts.nodes} of ${total} nodes (some have no parent in the tree)`);
  let after = 0;
  for (;;) {
    const page = await from
      .prepare(`SELECT rowid AS _rowid, * FROM templates WHERE tree_id = ?1 AND rowid > ?2 ORDER BY rowid LIMIT ${PAGE_ROWS}`)
      .bind(treeId, after)
      .all<Row & { _rowid: number; id: string }>();
    if (page.results.length === 0) break;
    const evidence = await rowsWhereIn(
      from,
      "template_evidence",
      "template_id",
      page.results.map((t) => t.id),
    );
    await to.batch([...inserts(to, "templates", page.results.map(withoutRowid)), ...inserts(to, "template_evidence", evidence)]);
    counts.templates += page.results.length;
    after = page.results[page.results.length - 1]._rowid;
    await breathe();
    if (page.results.length < PAGE_ROWS) break;
  }
  return counts;
}

function withoutRowid(row: Row): Row {
  const { _rowid: _, ...rest } = row;
  return rest;
}

/** The statements that delete the evidence and observations of `hashes` (chunks under the parameter limit). */
function deleteAttached(db: D1Database, hashes: readonly string[]): D1PreparedStatement[] {
  const out: D1PreparedStatement[] = [];
  for (let i = 0; i < hashes.length; i += MAX_PARAMS) {
    const chunk = hashes.slice(i, i + MAX_PARAMS);
    const list = placeholders(chunk.length);
    out.push(db.prepare(`DELETE FROM template_evidence WHERE answer_hash IN (${list})`).bind(...chunk));
    out.push(db.prepare(`DELETE FROM template_observations WHERE answer_hash IN (${list})`).bind(...chunk));
  }
  return out;
}

/** Deletes the evidence and observations of `hashes` (at most PAGE_ROWS: one batch) and adds their counts. */
async function deleteAttachedRows(db: D1Database, hashes: readonly string[], counts: PageCounts): Promise<void> {
  if (hashes.length === 0) return;
  const results = await db.batch(deleteAttached(db, hashes));
  results.forEach((r, i) => {
    if (i % 2 === 0) counts.evidence += r.meta.changes ?? 0;
    else counts.observations += r.meta.changes ?? 0;
  });
}

/**
 * Deletes the children of `parents`, each parent's in one statement with as
 * many others as fit in PAGE_ROWS children (a parent with more goes alone):
 * a reader sees all of a node's answers or none.
 */
async function deleteSiblingSets(db: D1Database, treeId: string, parents: readonly string[], children: readonly NodeRow[], counts: PageCounts): Promise<void> {
  const sizes = new Map<string, number>();
  for (const c of children) sizes.set(c.parent, (sizes.get(c.parent) ?? 0) + 1);
  const groups: string[][] = [];
  let group: string[] = [];
  let rows = 0;
  for (const parent of parents.filter((p) => sizes.has(p))) {
    const size = sizes.get(parent) ?? 0;
    if (group.length > 0 && rows + size > PAGE_ROWS) {
      groups.push(group);
      group = [];
      rows = 0;
    }
    group.push(parent);
    rows += size;
  }
  if (group.length > 0) groups.push(group);
  for (const g of groups) {
    const deleted = await db
      .prepare(`DELETE FROM nodes WHERE parent IN (${placeholders(g.length, 2)}) AND tree_id = ?1`)
      .bind(treeId, ...g)
      .run();
    counts.nodes += deleted.meta.changes ?? 0;
    await breathe();
  }
}

/**
 * Deletes every row of `treeId` from `db`, in pages: nodes from the root
 * down, each page's evidence and observations first and then the page's
 * sibling sets, whatever no walk reaches, templates with their evidence, the
 * tree row last. Resumable: it deletes whatever is left.
 */
export async function drainTree(db: D1Database, treeId: string): Promise<PageCounts> {
  const counts = noCounts();
  // Whole sibling sets first, from the root down (a reader sees all of a node's answers or none) ...
  await walkDown(
    db,
    treeId,
    "hash, parent",
    (page) =>
      deleteAttachedRows(
        db,
        page.map((n) => n.hash),
        counts,
      ),
    (parents, children) => deleteSiblingSets(db, treeId, parents, children, counts),
  );
  // ... then whatever no walk reaches (a node whose parent is gone), a page at a time.
  for (;;) {
    const page = await db.prepare(`SELECT hash FROM nodes WHERE tree_id = ?1 LIMIT ${PAGE_ROWS}`).bind(treeId).all<{ hash: string }>();
    if (page.results.length === 0) break;
    const hashes = page.results.map((r) => r.hash);
    await deleteAttachedRows(db, hashes, counts);
    const deleted = await db
      .prepare(`DELETE FROM nodes WHERE hash IN (${placeholders(hashes.length)})`)
      .bind(...hashes)
      .run();
    counts.nodes += deleted.meta.changes ?? 0;
    await breathe();
  }
  for (;;) {
    const page = await db.prepare(`SELECT id FROM templates WHERE tree_id = ?1 LIMIT ${PAGE_ROWS}`).bind(treeId).all<{ id: string }>();
    const ids = page.results.map((r) => r.id);
    if (ids.length === 0) break;
    const list = placeholders(ids.length);
    const [evidence, templates] = await db.batch([
      db.prepare(`DELETE FROM template_evidence WHERE template_id IN (${list})`).bind(...ids),
      db.prepare(`DELETE FROM templates WHERE id IN (${list})`).bind(...ids),
    ]);
    counts.evidence += evidence.meta.changes ?? 0;
    counts.templates += templates.meta.changes ?? 0;
    await breathe();
  }
  // The upstream response ids recorded with the tree's answers (copied with their nodes).
  await db.prepare(`DELETE FROM upstream_responses WHERE tree_id = ?1`).bind(treeId).run();
  const tree = await db.prepare(`DELETE FROM trees WHERE id = ?1`).bind(treeId).run();
  counts.trees = tree.meta.changes ?? 0;
  return counts;
}
