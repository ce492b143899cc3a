import { z } from "zod";
import { readRecentPage, readRequest, type RecentCursor } from "../../store/tree/recent-read";
import { encodeCursor } from "../../store/tree/cursor";
import { databasesOf } from "../../store/shards/shards";
import { decodeCursor, limitSchema, notFound, parseWith, scopeOf, type ApiCtx } from "./params";

const HEX32 = /^[0-9a-f]{32}$/;
/** Request ids as src/observability/request-id.ts accepts them. */
const REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

const requestsQuery = z.object({
  limit: limitSchema(50, 200),
  outcome: z.enum(["hit", "template", "miss", "bypass", "error"]).optional(),
  tree: z.string().regex(HEX32, "must be a tree id (32 lowercase hex characters)").optional(),
  model: z.string().min(1).max(256).optional(),
  since: z.coerce.number().int().nonnegative().optional(),
  until: z.coerce.number().int().nonnegative().optional(),
  q: z.string().regex(REQUEST_ID, "must be (the start of) a request id").optional(),
  cursor: z.string().max(200).optional(),
});

/**
 * `GET /api/requests?limit=N&outcome=&tree=&model=&since=&until=&q=&cursor=`: the caller's requests through
 * the cached routes, newest first, a page at a time over the whole retained log (the admin sees every
 * tenant's, and the requests never keyed to a tree). `next_cursor` pages on. Rows arrive with the
 * counters' flush (COUNTER_FLUSH_MS + TALLY_FLUSH_MS).
 */
export async function getRequests(c: ApiCtx): Promise<Response> {
  const q = parseWith(requestsQuery, c.req.query());
  const after: RecentCursor | null = q.cursor ? decodeCursor(q.cursor, ["number", "number", "number"] as const) : null;
  const filters = { outcome: q.outcome, tree: q.tree, model: q.model, since: q.since, until: q.until, requestId: q.q };
  const page = await readRecentPage(databasesOf(c.var.services.shards), scopeOf(c), filters, q.limit, after);
  c.header("cache-control", "no-store");
  return c.json({ data: page.rows, next_cursor: page.next ? encodeCursor(page.next) : null });
}

/**
 * `GET /api/requests/:id`: the request the client saw as `x-request-id: <id>`, with a miss's explanation
 * (docs/api.md). A tenant sees only its own trees' requests; an unknown id, another tenant's, or one not
 * written yet (rows land with the counters' flush) is a 404. Several rows when the client reused the id.
 */
export async function getRequest(c: ApiCtx): Promise<Response> {
  const id = c.req.param("id") ?? "";
  if (!REQUEST_ID.test(id)) throw notFound("request");
  const rows = await readRequest(databasesOf(c.var.services.shards), scopeOf(c), id);
  if (rows.length === 0) throw notFound("request (rows are written within COUNTER_FLUSH_MS + TALLY_FLUSH_MS of the request)");
  c.header("cache-control", "no-store");
  return c.json({ data: rows[0], others: rows.slice(1) });
}
