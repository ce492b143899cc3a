import { z } from "zod";
import { readRecent } from "../../store/tree/recent-requests";
import { allShards } from "../../store/shards/shards";
import { limitSchema, parseWith, scopeOf, type ApiCtx } from "./params";

const requestsQuery = z.object({ limit: limitSchema(50, 200) });

/**
 * `GET /api/requests?limit=N`: the caller's last N requests through the cached
 * routes, newest first (the admin sees every tenant's, and the requests never
 * keyed to a tree). Rows arrive with the counters' flush (COUNTER_FLUSH_MS).
 */
export async function getRequests(c: ApiCtx): Promise<Response> {
  const q = parseWith(requestsQuery, c.req.query());
  c.header("cache-control", "no-store");
  return c.json({ data: await readRecent(allShards(c.env), scopeOf(c), q.limit) });
}
