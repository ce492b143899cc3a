/**
 * A tree read from its root down, a level at a time, through the `parent`
 * index in pages of at most PAGE_ROWS rows: how a move copies a tree
 * (move-pages.ts) and drains it (drain-tree.ts). Every page ends with a timer
 * turn (src/core/timer-turn.ts).
 */
import { breathe } from "../../core/timer-turn";
import type { NodeRecord } from "../tree/schema";
import { PAGE_ROWS, placeholders, type Row, withoutRowid } from "./page-sql";

/** Parents whose children one walk step reads (in pages of at most PAGE_ROWS rows). */
const PARENTS_PER_STEP = 50;

/** A node row as a page reads it: any of its columns, the walk's `hash` and `parent` among them. */
export type NodeRow = Row & Pick<NodeRecord, "hash" | "parent">;

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
export async function walkDown(
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
