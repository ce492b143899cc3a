/** What one request asked of the store: D1 queries (with the rows D1 bills for them) and Durable Object calls, with their wall time. */
export interface StoreCost {
  d1: D1Cost;
  do: { calls: number; ms: number };
  /** The per-colo layer's read, when the lookup asked it (src/engine/lookup/colo-cache.ts). */
  colo?: { outcome: "hit" | "miss"; ms: number };
  /** The Cloudflare colo serving the request (`request.cf.colo`), named in the `colo` entry. */
  place?: string;
  /** Set once the response's `server-timing` is built: D1 work after it is logged as `store_work` lines (debug). */
  sealed?: boolean;
}

/**
 * What some work did to D1: queries, their wall time, and the rows D1 bills for them, summed from each
 * result's own `meta.rows_read` / `meta.rows_written` (every index entry a write touches is a row written;
 * a batch's results each carry theirs). Plain data: a tree's object returns it over RPC.
 */
export interface D1Cost {
  queries: number;
  ms: number;
  rowsRead: number;
  rowsWritten: number;
}

export const zeroD1 = (): D1Cost => ({ queries: 0, ms: 0, rowsRead: 0, rowsWritten: 0 });

/** A zero cost, started for one request. */
export function newStoreCost(): StoreCost {
  return { d1: zeroD1(), do: { calls: 0, ms: 0 } };
}
