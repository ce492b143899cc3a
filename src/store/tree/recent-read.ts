import { type RecentColumns, type RecentRequest, requestOf } from "./recent-requests";
import type { LeftJoined, RecentRequestRecord, TreeRecord } from "./schema";
import { tenantParam, type Scope } from "./scope";

/** A listed request, with its tree's namespace and model. */
export type RecentListed = RecentRequest & { namespace: string | null; model: string | null };

/** What the request log is filtered by (every field optional). */
export interface RecentFilters {
  /** `hit`, `template`, `miss`, `bypass` (the `muscle-mem-cache` outcome), or `error` (any status of 400 or more). */
  outcome?: "hit" | "template" | "miss" | "bypass" | "error";
  tree?: string;
  model?: string;
  /** Rows at or after / before these times (ms). */
  since?: number;
  until?: number;
  /** Rows whose request id starts with this. */
  requestId?: string;
}

/** A position in the merged log: the row's time, its database's index among the shards, and its id there. */
export type RecentCursor = readonly [at: number, shard: number, id: number];

/** A row of SELECT: the request's stored columns, its row id, and its tree's namespace and model (null: no tree row). */
type Row = RecentColumns & Pick<RecentRequestRecord, "id"> & LeftJoined<Pick<TreeRecord, "namespace" | "model">>;

const SELECT = `SELECT r.id, r.at, r.tree_id, r.route, r.outcome, r.status, r.latency_ms, r.prompt_tokens, r.completion_tokens, r.node_hash, r.template_id,
    r.reason, r.count, r.request_id, r.explanation, r.error, r.tenant, t.namespace, t.model
  FROM recent_requests r LEFT JOIN trees t ON t.id = r.tree_id`;

/**
 * One page of the retained request log over every database, newest first
 * (by time, then database, then row id: a stable order for the cursor): a
 * tenant's own rows (its keyed requests and its trees'), or every row for the admin
 * (EVERY_TENANT), including requests never keyed to a tree. One query per
 * database; the log is bounded (RECENT_KEPT rows per database).
 */
export async function readRecentPage(
  dbs: readonly D1Database[],
  scope: Scope,
  filters: RecentFilters,
  limit: number,
  after: RecentCursor | null = null,
): Promise<{ rows: RecentListed[]; next: RecentCursor | null }> {
  const [cAt, cShard, cId] = after ?? [Number.MAX_SAFE_INTEGER, -1, 0];
  const pages = await Promise.all(
    dbs.map(async (db, shard) => {
      const result = await db
        .prepare(
          `${SELECT}
           WHERE (?1 IS NULL OR coalesce(r.tenant, t.tenant) = ?1)
             AND (?2 IS NULL OR (?2 = 'error' AND r.status >= 400) OR r.outcome = ?2)
             AND (?3 IS NULL OR r.tree_id = ?3) AND (?4 IS NULL OR t.model = ?4)
             AND (?5 IS NULL OR r.at >= ?5) AND (?6 IS NULL OR r.at < ?6)
             AND (?7 IS NULL OR substr(r.request_id, 1, length(?7)) = ?7)
             AND (r.at < ?8 OR (r.at = ?8 AND (?9 > ?10 OR (?9 = ?10 AND r.id < ?11))))
           ORDER BY r.at DESC, r.id DESC LIMIT ?12`,
        )
        .bind(
          tenantParam(scope),
          filters.outcome ?? null,
          filters.tree ?? null,
          filters.model ?? null,
          filters.since ?? null,
          filters.until ?? null,
          filters.requestId ?? null,
          cAt,
          shard,
          cShard,
          cId,
          limit + 1,
        )
        .all<Row>();
      return result.results.map((row) => ({ row, shard }));
    }),
  );
  const merged = pages.flat().sort((a, b) => b.row.at - a.row.at || a.shard - b.shard || b.row.id - a.row.id);
  const page = merged.slice(0, limit);
  const last = page[page.length - 1];
  const next: RecentCursor | null = merged.length > limit && last ? [last.row.at, last.shard, last.row.id] : null;
  return { rows: page.map((p) => listed(p.row)), next };
}

/**
 * The retained rows of request `requestId` (newest first: an id a client reused names several), a tenant's
 * own or any for the admin (EVERY_TENANT). One indexed query per database (recent_requests_request_idx).
 */
export async function readRequest(dbs: readonly D1Database[], scope: Scope, requestId: string): Promise<RecentListed[]> {
  const pages = await Promise.all(
    dbs.map((db) =>
      db
        .prepare(`${SELECT} WHERE r.request_id = ?2 AND (?1 IS NULL OR coalesce(r.tenant, t.tenant) = ?1) ORDER BY r.id DESC LIMIT 20`)
        .bind(tenantParam(scope), requestId)
        .all<Row>(),
    ),
  );
  return pages
    .flatMap((p) => p.results)
    .sort((a, b) => b.at - a.at)
    .map(listed);
}

function listed(r: Row): RecentListed {
  const { id, namespace, model, ...stored } = r;
  return { ...requestOf(stored), namespace, model };
}
