import type { Phase, RequestReport } from "./report";

/** `LOG_LEVEL`: which request lines are written. */
export type LogLevel = "debug" | "info" | "warn" | "error" | "off";

const LEVELS: readonly LogLevel[] = ["debug", "info", "warn", "error", "off"];

/** Parses `LOG_LEVEL`; anything unknown is `info`. */
export function parseLogLevel(value: string | undefined): LogLevel {
  const v = (value ?? "").trim().toLowerCase();
  return (LEVELS as readonly string[]).includes(v) ? (v as LogLevel) : "info";
}

/**
 * One request's structured log line. It holds ids, outcomes and timings only:
 * never an API key, a header value other than the request id, or message content.
 */
export interface RequestLogLine {
  event: "request";
  level: "info" | "warn" | "error";
  request_id: string;
  method: string;
  /** The matched route pattern, e.g. `/v1/chat/completions` or `/api/trees/:treeId`. */
  route: string;
  status: number;
  /** `muscle-mem-cache` of the response (hit, miss, bypass), or null when the route has none. */
  outcome: string | null;
  tree: string | null;
  /** Why the cache was bypassed, when the handler said. */
  reason: string | null;
  /** Milliseconds: each phase, then `upstream` (to the model's headers) or `respond`, and `total` (to our headers). */
  ms: Partial<Record<Phase | "upstream" | "respond", number>> & { total: number };
  /** Only at `LOG_LEVEL=debug`: the Cloudflare data centre and the request body's declared size. */
  colo?: string;
  bytes_in?: number;
}

export interface RequestFacts {
  requestId: string;
  method: string;
  route: string;
  status: number;
  outcome: string | null;
  /** The response came from a single-flight leader's answer (no upstream call of its own). */
  follower: boolean;
  report: RequestReport;
  end: number;
}

/** Builds the line; the time after the last phase is `upstream` for misses and bypasses, else `respond`. */
export function requestLine(f: RequestFacts): RequestLogLine {
  const { report } = f;
  const ms: RequestLogLine["ms"] = { ...report.phases, total: f.end - report.startedAt };
  const rest = f.end - report.lastMark;
  const upstream = (f.outcome === "miss" || f.outcome === "bypass") && !f.follower;
  if (upstream) ms.upstream = rest;
  else ms.respond = rest;
  return {
    event: "request",
    level: f.status >= 500 ? "error" : f.status >= 400 ? "warn" : "info",
    request_id: f.requestId,
    method: f.method,
    route: f.route,
    status: f.status,
    outcome: f.outcome,
    tree: report.tree ?? null,
    reason: report.reason ?? null,
    ms,
  };
}

/**
 * What happens to `line` at `level`: `write` it now, `gather` it (a hit at `info`: counted into one
 * `hits` line per tree and route at the next flush, src/observability/hit-lines.ts) or `skip` it.
 * `debug` writes every request, `info` every request but hits, `warn` 4xx and 5xx, `error` 5xx.
 */
export function lineDisposition(level: LogLevel, line: RequestLogLine): "write" | "gather" | "skip" {
  switch (level) {
    case "off":
      return "skip";
    case "error":
      return line.level === "error" ? "write" : "skip";
    case "warn":
      return line.level !== "info" ? "write" : "skip";
    case "info":
      return line.outcome === "hit" && line.level === "info" ? "gather" : "write";
    default:
      return "write";
  }
}
