import type { MissExplanation } from "../../core/explanation";
import type { RecentRequestRecord } from "./schema";

/** One request the cached routes answered, as the recent-requests view lists it. */
export interface RecentRequest {
  at: number;
  tree_id: string | null;
  route: string;
  /** hit, template (a learned or declared template served it), miss or bypass. */
  outcome: "hit" | "template" | "miss" | "bypass";
  status: number;
  latency_ms: number;
  /** Tokens the hit saved (the served answer's usage); null on misses and bypasses. */
  prompt_tokens: number | null;
  completion_tokens: number | null;
  /** The node that served a hit (the recorded answer), else null. */
  node: string | null;
  template_id: string | null;
  /** Why the cache was bypassed, when it was. */
  reason: string | null;
  /**
   * How many requests the row stands for: hits, template hits and bypasses of
   * one tree are gathered between writes (src/store/tree/recent-gather.ts), so `at`
   * is the latest, `node` the latest serving node, the tokens are summed and
   * `latency_ms` is the mean. 1 for a miss.
   */
  count: number;
  /** The `x-request-id` the client saw (of the latest request, for a gathered row). */
  request_id: string | null;
  /** Why a miss missed (null otherwise, or when it could not be worked out). */
  explanation: MissExplanation | null;
  /** An error answer's message (status 400 or more): the upstream's `error.message`, or the Worker's own; at most 300 characters. */
  error: string | null;
  /** The tenant of a keyed request (null when it was never keyed). */
  tenant: string | null;
}

/** Rows kept per database: older ones go with each flush (about 1 MB). */
export const RECENT_KEPT = 5000;
/**
 * Rows kept per tree (and for the rows of no tree), within RECENT_KEPT: one busy tree, or one busy
 * tenant's few trees, cannot push every other tenant's history out (a page of `GET /api/requests` is 200).
 */
export const RECENT_KEPT_PER_TREE = 200;

/** The stored columns of a RecentRequest: every column of its row but the row id. */
export type RecentColumns = Omit<RecentRequestRecord, "id" | "outcome"> & Pick<RecentRequest, "outcome">;

const COLUMNS = [
  "at",
  "tree_id",
  "route",
  "outcome",
  "status",
  "latency_ms",
  "prompt_tokens",
  "completion_tokens",
  "node_hash",
  "template_id",
  "reason",
  "count",
  "request_id",
  "explanation",
  "error",
  "tenant",
] as const satisfies readonly (keyof RecentColumns)[];

/**
 * The one mapping between a request and its row, both ways: every field is stored under its own name but `node`
 * (column `node_hash`) and the explanation (JSON; a column that does not parse reads as null).
 */
function columnsOf(r: RecentRequest): RecentColumns {
  const { node, explanation, ...same } = r;
  return { ...same, node_hash: node, explanation: explanation ? JSON.stringify(explanation) : null };
}

export function requestOf(row: RecentColumns): RecentRequest {
  const { node_hash, explanation, ...same } = row;
  return { ...same, node: node_hash, explanation: explanationOf(explanation) };
}

/** A stored explanation; one written before `fast_miss` and `answers` existed was looked up, its answers not counted (null). */
function explanationOf(text: string | null): MissExplanation | null {
  if (!text) return null;
  try {
    const stored = JSON.parse(text) as Omit<MissExplanation, "fast_miss" | "answers"> & Partial<Pick<MissExplanation, "fast_miss" | "answers">>;
    return { ...stored, fast_miss: stored.fast_miss ?? false, answers: stored.answers ?? null };
  } catch {
    return null;
  }
}

/**
 * The statements a flush adds per database: one insert of every buffered
 * row (passed as one JSON parameter, so that D1's 100-parameter limit never
 * binds), one delete per tree among the rows that keeps that tree's newest
 * RECENT_KEPT_PER_TREE (recent_requests_tree_idx), and one delete that keeps
 * the newest RECENT_KEPT rows of the database.
 */
export function recentStatements(db: D1Database, rows: readonly RecentRequest[]): D1PreparedStatement[] {
  const cols = COLUMNS.join(", ");
  const picks = COLUMNS.map((c) => `json_extract(value, '$.${c}')`).join(", ");
  const trees = [...new Set(rows.map((r) => r.tree_id))];
  return [
    db.prepare(`INSERT INTO recent_requests (${cols}) SELECT ${picks} FROM json_each(?1)`).bind(JSON.stringify(rows.map(columnsOf))),
    ...trees.map((tree) =>
      db
        .prepare(
          `DELETE FROM recent_requests WHERE tree_id IS ?1 AND id <= (SELECT id FROM recent_requests WHERE tree_id IS ?1 ORDER BY id DESC LIMIT 1 OFFSET ${RECENT_KEPT_PER_TREE})`,
        )
        .bind(tree),
    ),
    db.prepare(`DELETE FROM recent_requests WHERE id <= (SELECT id FROM recent_requests ORDER BY id DESC LIMIT 1 OFFSET ${RECENT_KEPT})`),
  ];
}
