/**
 * A tree's rows copied to another shard and deleted from one, in pages of at
 * most PAGE_ROWS rows per read and per write batch and D1's 100 bound
 * parameters per statement, never a shard's writer held for long. Nodes are
 * read walking down from the root through the `parent` index; the templates'
 * evidence and the learning observations of a page's answers go with it;
 * templates are paged by their index (tree_id, rowid), kept template answers by rowid. The one statement
 * larger than a page: the drain deletes each node's children in one DELETE
 * (as many rows as the node has children), so that a reader of the source
 * sees all of a node's answers or none; the copy needs no such unit (nobody
 * reads the target before the switch).
 *
 * Every page ends with a timer turn (src/core/timer-turn.ts): under
 * `wrangler dev` a move's chain of in-process D1 calls otherwise kept the
 * local Worker from answering anything until the move ended.
 *
 * The copy is here (copyTree), the drain in drain-tree.ts; both walk the tree
 * with walk-down.ts and write through page-sql.ts.
 */
import { breathe } from "../../core/timer-turn";
import { inserts, noCounts, PAGE_ROWS, type PageCounts, type Row, rowsWhereIn, withoutRowid } from "./page-sql";
import { walkDown } from "./walk-down";

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
  await copyServedAnswers(from, to, treeId);
  return counts;
}

/** Kept template answers read per page (each holds a request's messages: fewer than other rows). */
const SERVED_PAGE_ROWS = 10;

/** The tree's kept template answers (src/store/tree/served-answers.ts), paged by their index (tree_id, created_at) and rowid. */
async function copyServedAnswers(from: D1Database, to: D1Database, treeId: string): Promise<void> {
  let after = 0;
  for (;;) {
    const page = await from
      .prepare(`SELECT rowid AS _rowid, * FROM served_answers WHERE tree_id = ?1 AND rowid > ?2 ORDER BY rowid LIMIT ${SERVED_PAGE_ROWS}`)
      .bind(treeId, after)
      .all<Row & { _rowid: number }>();
    if (page.results.length === 0) return;
    await to.batch(inserts(to, "served_answers", page.results.map(withoutRowid)));
    after = page.results[page.results.length - 1]._rowid;
    await breathe();
    if (page.results.length < SERVED_PAGE_ROWS) return;
  }
}
