import type { Context, MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";
import { writeRequestPoint } from "../observability/analytics";
import { lineDisposition, requestLine } from "../observability/log";
import { inRequestContext } from "../observability/request-context";
import { gatherHitLine, rememberRequest } from "../engine/counting/recent-row";
import { newReport, type Phase, type RequestReport } from "../observability/report";
import { CACHE_HEADER, MISS_HEADER, REQUEST_ID_HEADER, SINGLE_FLIGHT_HEADER } from "../core/protocol";
import { requestIdOf } from "../observability/request-id";
import type { WorkerEnv } from "../engine/services";
import { meteredEnv, newStoreCost, storeTimingEntries, type StoreCost } from "../observability/store-meter";

type Ctx = Context<WorkerEnv>;

/**
 * The request-observability middleware: gives each request an id (the
 * incoming `x-request-id` when sane, else a UUID), echoes it as a response
 * header, writes one JSON log line per request at `LOG_LEVEL` (a hit's is
 * gathered into its tree's `hits` line at `info`: hit-lines.ts), and one
 * Analytics Engine data point when the `ANALYTICS` binding exists.
 *
 * @example app.use("*", observe())
 */
export function observe(): MiddlewareHandler<WorkerEnv> {
  return async function observability(c, next) {
    const requestId = requestIdOf(c.req.raw.headers);
    c.set("requestId", requestId);
    const report = newReport();
    c.set("mm", report);
    // Every D1 query and Durable Object call the request makes is counted (server-timing d1 and do).
    c.env = meteredEnv(c.env);
    const cost = newStoreCost();
    const colo = (c.req.raw.cf as { colo?: unknown } | undefined)?.colo;
    if (typeof colo === "string") cost.place = colo;
    const level = c.var.services.config.logLevel;
    // One context for the request's log lines and its store meter: every logEvent of the request (waitUntil work
    // included) carries its id and respects LOG_LEVEL, and every store call is metered.
    const context = { requestId, level, cost };
    await inRequestContext(context, next);
    const end = Date.now();
    setResponseHeader(c, REQUEST_ID_HEADER, requestId);
    const headers = c.res.headers;
    const outcome = headers.get(CACHE_HEADER);
    const follower = headers.get(SINGLE_FLIGHT_HEADER) === "follower";
    if (report.miss && outcome === "miss") setResponseHeader(c, MISS_HEADER, report.miss.header);
    setResponseHeader(c, "server-timing", serverTiming(report, cost, end));
    const line = requestLine({ requestId, method: c.req.method, route: routeOf(c), status: c.res.status, outcome, follower, report, end });
    if (level === "debug") {
      if (typeof colo === "string") line.colo = colo;
      const length = Number(c.req.header("content-length"));
      if (Number.isFinite(length)) line.bytes_in = length;
    }
    const disposition = lineDisposition(level, line);
    if (disposition === "write") console.log(JSON.stringify(line));
    else if (disposition === "gather") gatherHitLine(c, line);
    writeRequestPoint(c.env.ANALYTICS, line);
    // In the request's context: the D1 work it leaves for after the response (a miss's explanation) is metered and logged (store_work, debug).
    inRequestContext(context, () => rememberRequest(c, line));
  };
}

/**
 * Phase durations and the store's cost as a standard `Server-Timing` value
 * (names, milliseconds and counts only): `parse;dur=0, lookup;dur=2,
 * d1;dur=2;desc=1, do;dur=0;desc=0, total;dur=3`.
 */
function serverTiming(report: RequestReport, cost: StoreCost, end: number): string {
  let value = "";
  for (const name in report.phases) value += `${name};dur=${report.phases[name as Phase]}, `;
  return `${value}${storeTimingEntries(cost).join(", ")}, total;dur=${end - report.startedAt}`;
}

/** The pattern of the route that answered, never the raw URL (no query strings in logs). */
function routeOf(c: Ctx): string {
  const route = matchedRoutes(c)[c.req.routeIndex];
  return route && route.path !== "*" ? route.path : new URL(c.req.url).pathname.slice(0, 200);
}

/** Responses relayed from fetch() have immutable headers: copy the response once when needed. */
function setResponseHeader(c: Ctx, name: string, value: string): void {
  try {
    c.res.headers.set(name, value);
  } catch {
    const copy = new Response(c.res.body, c.res);
    copy.headers.set(name, value);
    c.res = undefined;
    c.res = copy;
  }
}
