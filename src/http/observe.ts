import type { Context, MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";
import { writeRequestPoint } from "../observability/analytics";
import { lineDisposition, requestLine } from "../observability/log";
import { withLogContext } from "../observability/log-event";
import { gatherHitLine, rememberRequest } from "../engine/counting/recent-row";
import { newReport } from "../observability/report";
import { CACHE_HEADER, MISS_HEADER, REQUEST_ID_HEADER, SINGLE_FLIGHT_HEADER } from "../core/protocol";
import { requestIdOf } from "../observability/request-id";
import type { WorkerEnv } from "../engine/services";
import { meteredEnv, newStoreCost, runMetered, storeTimingEntries, type StoreCost } from "../observability/store-meter";

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
    c.set("mm", newReport());
    // Every D1 query and Durable Object call the request makes is counted (server-timing d1 and do).
    c.env = meteredEnv(c.env);
    const cost = newStoreCost();
    const place = (c.req.raw.cf as { colo?: unknown } | undefined)?.colo;
    if (typeof place === "string") cost.place = place;
    const level = c.var.services.config.logLevel;
    // Every logEvent of the request (waitUntil work included) carries its id and respects LOG_LEVEL.
    await withLogContext({ requestId, level }, () => runMetered(cost, next));
    const end = Date.now();
    setResponseHeader(c, REQUEST_ID_HEADER, requestId);
    const miss = c.get("mm").miss;
    if (miss && c.res.headers.get(CACHE_HEADER) === "miss") setResponseHeader(c, MISS_HEADER, miss.header);
    const timing = serverTiming(c.get("mm"), cost, end);
    if (timing) setResponseHeader(c, "server-timing", timing);
    const line = requestLine({
      requestId,
      method: c.req.method,
      route: routeOf(c),
      status: c.res.status,
      outcome: c.res.headers.get(CACHE_HEADER),
      follower: c.res.headers.get(SINGLE_FLIGHT_HEADER) === "follower",
      report: c.get("mm"),
      end,
    });
    if (level === "debug") {
      const colo = (c.req.raw.cf as { colo?: unknown } | undefined)?.colo;
      if (typeof colo === "string") line.colo = colo;
      const length = Number(c.req.header("content-length"));
      if (Number.isFinite(length)) line.bytes_in = length;
    }
    const disposition = lineDisposition(level, line);
    if (disposition === "write") console.log(JSON.stringify(line));
    else if (disposition === "gather") gatherHitLine(c, line);
    writeRequestPoint(c.env.ANALYTICS, line);
    // In the request's contexts: the D1 work it leaves for after the response (a miss's explanation) is metered and logged (store_work, debug).
    withLogContext({ requestId, level }, () => runMetered(cost, () => rememberRequest(c, line)));
  };
}

/**
 * Phase durations and the store's cost as a standard `Server-Timing` value
 * (names, milliseconds and counts only): `parse;dur=0, lookup;dur=2,
 * d1;dur=2;desc=1, do;dur=0;desc=0, total;dur=3`.
 */
function serverTiming(report: { phases: Partial<Record<string, number>>; startedAt: number } | undefined, cost: StoreCost, end: number): string | null {
  if (!report) return null;
  const phases = Object.entries(report.phases).map(([name, ms]) => `${name};dur=${ms}`);
  return [...phases, ...storeTimingEntries(cost), `total;dur=${end - report.startedAt}`].join(", ");
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
