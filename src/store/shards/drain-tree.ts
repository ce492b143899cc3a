/**
 * A tree's rows deleted from one shard in pages (the last step of a move, and
 * what undoes a crashed move's partial copy): see move-pages.ts. Each node's
 * children go in one DELETE, so that a reader sees all of a node's answers or none.
 */
import { breathe } from "../../core/timer-turn";
import { MAX_PARAMS, noCounts, PAGE_ROWS, type PageCounts, placeholders } from "./page-sql";
import { type NodeRow, walkDown } from "./walk-down";

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
  // The template answers kept for chaining (copied after the templates).
  await db.prepare(`DELETE FROM served_answers WHERE tree_id = ?1`).bind(treeId).run();
  const tree = await db.prepare(`DELETE FROM trees WHERE id = ?1`).bind(treeId).run();
  counts.trees = tree.meta.changes ?? 0;
  return counts;
}
