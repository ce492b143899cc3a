import { emptyTally, type TallyBatch } from "./tally-batch";

/**
 * Splits one tree's tally into pages of at most `rows` row updates (tallyRows), so that a write is a bounded
 * D1 batch: the first page carries the tree's row and its recent-requests rows, the nodes and templates
 * follow in order. Every count lands in exactly one page. Pure.
 *
 * @example tallyPages(tally, 250).map(tallyRows) // [250, 250, 17]
 */
export function tallyPages(tally: TallyBatch, rows: number): TallyBatch[] {
  const size = Math.max(1, rows);
  const pages: TallyBatch[] = [];
  let page: TallyBatch = { ...emptyTally(tally.treeId), tree: tally.tree, recent: tally.recent };
  let used = (tally.tree ? 1 : 0) + (tally.recent.length > 0 ? 1 : 0);
  const next = () => {
    pages.push(page);
    page = emptyTally(tally.treeId);
    used = 0;
  };
  for (const [hash, n] of Object.entries(tally.nodes)) {
    if (used >= size) next();
    page.nodes[hash] = n;
    used++;
  }
  for (const [id, hits] of Object.entries(tally.templates)) {
    if (used >= size) next();
    page.templates[id] = hits;
    used++;
  }
  if (used > 0) pages.push(page);
  return pages;
}
