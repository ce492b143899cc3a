import type { RecentRequest } from "./recent-requests";

/** Rows buffered per tree between writes, at most (the oldest go first). */
export const RECENT_BUFFERED = 500;

/**
 * Hits, template hits and bypasses are gathered, not logged one by one: the
 * requests of one tree with the same route, outcome, status, template and
 * bypass reason become one row whose `count` says how many it stands for
 * (the latest time and serving node, the tokens summed, the latency
 * averaged). So the rows a flush writes grow with the trees hit, never with
 * the hits. Misses stay one row each (a miss records nodes anyway).
 */
function gathers(row: RecentRequest): boolean {
  return row.outcome !== "miss";
}

function sameGroup(a: RecentRequest, b: RecentRequest): boolean {
  return (
    a.tree_id === b.tree_id &&
    a.route === b.route &&
    a.outcome === b.outcome &&
    a.status === b.status &&
    a.template_id === b.template_id &&
    a.reason === b.reason &&
    a.error === b.error
  );
}

function sumOrNull(a: number | null, b: number | null): number | null {
  return a === null && b === null ? null : (a ?? 0) + (b ?? 0);
}

/**
 * Where `row`'s group is in `rows` (-1: nowhere). Searched from the end: a
 * group moves to the end each time it grows, so a steadily hit tree's row is
 * found at once, however many misses are buffered before it (this runs per hit).
 */
function groupIndex(rows: readonly RecentRequest[], row: RecentRequest): number {
  for (let i = rows.length - 1; i >= 0; i--) if (sameGroup(rows[i], row)) return i;
  return -1;
}

/** One row for the requests of `a` and `b` (of one group). Pure. */
export function mergeRecentRows(a: RecentRequest, b: RecentRequest): RecentRequest {
  const [older, newer] = a.at <= b.at ? [a, b] : [b, a];
  const count = a.count + b.count;
  return {
    ...newer,
    count,
    latency_ms: Math.round((a.latency_ms * a.count + b.latency_ms * b.count) / count),
    prompt_tokens: sumOrNull(older.prompt_tokens, newer.prompt_tokens),
    completion_tokens: sumOrNull(older.completion_tokens, newer.completion_tokens),
    node: newer.node ?? older.node,
  };
}

/**
 * Adds `rows` to `into` (in place; returns it): a gathered outcome joins its
 * group's row, a miss is appended, and at most RECENT_BUFFERED rows are kept
 * (the oldest go first). A group's row moves to the end when it grows, so
 * the list stays in the order of each row's latest request.
 */
export function addRecent(into: RecentRequest[], rows: readonly RecentRequest[]): RecentRequest[] {
  for (const row of rows) {
    const at = gathers(row) ? groupIndex(into, row) : -1;
    if (at >= 0) {
      const [group] = into.splice(at, 1);
      into.push(mergeRecentRows(group, row));
    } else {
      into.push({ ...row });
    }
  }
  if (into.length > RECENT_BUFFERED) into.splice(0, into.length - RECENT_BUFFERED);
  return into;
}
