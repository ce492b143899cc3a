import type { IncomingMessage, ServerResponse } from "node:http";

/**
 * A stand-in for Workers Analytics Engine's SQL API, reached on the test
 * upstream's port by a URL path, so a test points the Worker at it with
 *
 *   ANALYTICS_SQL_URL = http://127.0.0.1:PORT/__analytics/<mode>/<tag>/accounts/{id}/analytics_engine/sql
 *
 * Modes:
 * - `ok`: answers like the SQL API with `FORMAT JSON` (`{meta, data, rows, rows_before_limit_at_least}`):
 *   rows for the window's first and third bucket, read from the SQL's `toDateTime(<start>)`
 *   and `INTERVAL '<step>' MINUTE` (SCRIPTED_ROWS; 64-bit sums quoted as the real API prints them).
 * - `empty`: no rows.
 * - `error-<status>`: that status with a plain-text error, as the SQL API answers a bad query.
 * - `html`: a 200 that is not JSON.
 * - `hang`: reads the request and never answers.
 *
 * `GET /__analytics/seen/<tag>` answers `[{sql, authorization, path}]`: every query the tag received.
 */
export interface AnalyticsRoutes {
  /** Handles `req` when it is an analytics route; false when it is not one. */
  handle: (req: IncomingMessage, res: ServerResponse) => boolean;
}

/** What the stand-in saw for one query. */
export interface SeenQuery {
  sql: string;
  authorization: string | null;
  path: string;
}

/** The `ok` mode's rows, by bucket offset from the window's start. */
export const SCRIPTED_ROWS = [
  { bucket: 0, hits: "3", misses: "1", bypasses: "0", p50_ms: 12.5, p99_ms: 40 },
  { bucket: 2, hits: "10", misses: "0", bypasses: "2", p50_ms: 3, p99_ms: 9.25 },
] as const;

/** The error modes' body: markup in it shows whether a client escapes upstream text. */
export const ERROR_TEXT = "Code: 47. DB::Exception: <b>scripted</b> failure of the SQL API stand-in";

const ROUTE = /^\/__analytics\/(ok|empty|html|hang|error-\d{3})\/([A-Za-z0-9_-]+)\//;
const SEEN = /^\/__analytics\/seen\/([A-Za-z0-9_-]+)$/;

function readAll(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (d: string) => (body += d));
    req.on("end", () => resolve(body));
    req.on("error", reject);
  });
}

/** The SQL API's JSON answer for `sql`, with SCRIPTED_ROWS placed in its window. */
function scriptedAnswer(sql: string): unknown {
  const start = Number(/toDateTime\((\d+)\)/.exec(sql)?.[1] ?? NaN);
  const step = Number(/INTERVAL '(\d+)' MINUTE/.exec(sql)?.[1] ?? NaN);
  const data = Number.isFinite(start) && Number.isFinite(step) ? SCRIPTED_ROWS.map(({ bucket, ...row }) => ({ t: start + bucket * step * 60, ...row })) : [];
  const meta = [
    { name: "t", type: "UInt32" },
    { name: "hits", type: "UInt64" },
    { name: "misses", type: "UInt64" },
    { name: "bypasses", type: "UInt64" },
    { name: "p50_ms", type: "Float64" },
    { name: "p99_ms", type: "Float64" },
  ];
  return { meta, data, rows: data.length, rows_before_limit_at_least: data.length };
}

/** Creates the analytics routes with their per-tag record of queries. */
export function analyticsRoutes(): AnalyticsRoutes {
  const seen = new Map<string, SeenQuery[]>();
  const answer = async (mode: string, tag: string, req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const sql = await readAll(req);
    const list = seen.get(tag) ?? [];
    list.push({ sql, authorization: req.headers.authorization ?? null, path: new URL(req.url ?? "/", "http://localhost").pathname });
    seen.set(tag, list);
    if (mode === "hang") return;
    const status = /^error-(\d{3})$/.exec(mode);
    if (status) {
      res.writeHead(Number(status[1]), { "content-type": "text/plain" });
      res.end(ERROR_TEXT);
      return;
    }
    if (mode === "html") {
      res.writeHead(200, { "content-type": "text/html" });
      res.end("<html><body>not the SQL API</body></html>");
      return;
    }
    const body = mode === "empty" ? { meta: [], data: [], rows: 0, rows_before_limit_at_least: 0 } : scriptedAnswer(sql);
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  };
  return {
    handle(req, res) {
      const path = new URL(req.url ?? "/", "http://localhost").pathname;
      const list = SEEN.exec(path);
      if (req.method === "GET" && list) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(seen.get(list[1]) ?? []));
        return true;
      }
      const route = ROUTE.exec(path);
      if (!route || req.method !== "POST") return false;
      answer(route[1], route[2], req, res).catch(() => res.destroy());
      return true;
    },
  };
}
