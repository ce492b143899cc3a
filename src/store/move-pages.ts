/**
 * A tree's rows copied to another shard and deleted from one, in pages of at
 * most PAGE_ROWS rows per read and D1's 100 bound parameters per statement:
 * never one unbounded statement, never a shard's writer held for long.
 * Nodes go as whole sibling sets, walking down from the root through the
 * `parent` index; the templates' evidence and the learning observations of a
 * page's answers go with it; templates are paged by their index (tree_id, rowid).
 */

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
    const page = await db.prepare(`SELECT * FROM ${table} WHERE ${column} IN (${placeholders(chunk.length)})`).bind(...chunk).all<Row>();
    out.push(...page.results);
  }
  return out;
}

/** Parents whose children one page takes: every child of a parent goes in the same page (one batch). */
const PARENTS_PER_PAGE = 50;

/** The children of `parents` (every sibling of each, so that an answer set is never split across pages). */
async function childrenOf(db: D1Database, treeId: string, parents: readonly string[]): Promise<Array<Row & { hash: string }>> {
  if (parents.length === 0) return [];
  const page = await db
    .prepare(`SELECT * FROM nodes WHERE parent IN (${placeholders(parents.length, 2)}) AND tree_id = ?1`)
    .bind(treeId, ...parents)
    .all<Row & { hash: string }>();
  return page.results;
}

/**
 * Walks the tree down from its root, a page per at most PARENTS_PER_PAGE
 * parents, giving each page (all children of those parents) to `visit`.
 * A page is whole sibling sets: a reader of either shard sees all of a
 * node's answers or none of them, never a subset that the policy would judge
 * differently.
 */
async function walkDown(db: D1Database, treeId: string, visit: (page: Array<Row & { hash: string }>, parents: string[]) => Promise<void>): Promise<number> {
  let frontier = [treeId];
  let seen = 0;
  while (frontier.length > 0) {
    const next: string[] = [];
    for (let i = 0; i < frontier.length; i += PARENTS_PER_PAGE) {
      const parents = frontier.slice(i, i + PARENTS_PER_PAGE);
      const page = await childrenOf(db, treeId, parents);
      if (page.length === 0) continue;
      await visit(page, parents);
      seen += page.length;
      next.push(...page.map((n) => n.hash));
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
  await walkDown(from, treeId, async (page) => {
    const hashes = page.map((n) => n.hash);
    const evidence = await rowsWhereIn(from, "template_evidence", "answer_hash", hashes);
    const observations = await rowsWhereIn(from, "template_observations", "answer_hash", hashes);
    await to.batch([...inserts(to, "nodes", page), ...inserts(to, "template_evidence", evidence), ...inserts(to, "template_observations", observations)]);
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
    const evidence = await rowsWhereIn(from, "template_evidence", "template_id", page.results.map((t) => t.id));
    await to.batch([...inserts(to, "templates", page.results.map(withoutRowid)), ...inserts(to, "template_evidence", evidence)]);
    counts.templates += page.results.length;
    after = page.results[page.results.length - 1]._rowid;
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

/** Runs deletes of attached rows and of nodes in one batch (one transaction) and adds their counts. */
async function deleteInOneBatch(db: D1Database, attached: D1PreparedStatement[], nodes: D1PreparedStatement, counts: PageCounts): Promise<void> {
  const results = await db.batch([...attached, nodes]);
  results.slice(0, -1).forEach((r, i) => {
    if (i % 2 === 0) counts.evidence += r.meta.changes ?? 0;
    else counts.observations += r.meta.changes ?? 0;
  });
  counts.nodes += results[results.length - 1].meta.changes ?? 0;
}

/**
 * Deletes every row of `treeId` from `db`, a page per batch: nodes (deepest
 * first) with their evidence and observations, templates with theirs, the
 * tree row last. Resumable: it deletes whatever is left.
 */
export async function drainTree(db: D1Database, treeId: string): Promise<PageCounts> {
  const counts = noCounts();
  // Whole sibling sets first, from the root down (a reader sees all of a node's answers or none) ...
  await walkDown(db, treeId, (page, parents) =>
    deleteInOneBatch(db, deleteAttached(db, page.map((n) => n.hash)), db.prepare(`DELETE FROM nodes WHERE parent IN (${placeholders(parents.length, 2)}) AND tree_id = ?1`).bind(treeId, ...parents), counts),
  );
  // ... then whatever no walk reaches (a node whose parent is gone), a page at a time.
  for (;;) {
    const page = await db.prepare(`SELECT hash FROM nodes WHERE tree_id = ?1 LIMIT ${PAGE_ROWS}`).bind(treeId).all<{ hash: string }>();
    if (page.results.length === 0) break;
    const hashes = page.results.map((r) => r.hash);
    await deleteInOneBatch(db, deleteAttached(db, hashes), db.prepare(`DELETE FROM nodes WHERE hash IN (${placeholders(hashes.length)})`).bind(...hashes), counts);
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
  }
  const tree = await db.prepare(`DELETE FROM trees WHERE id = ?1`).bind(treeId).run();
  counts.trees = tree.meta.changes ?? 0;
  return counts;
}
