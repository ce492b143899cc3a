import type { Context } from "hono";
import { scheduleFlush } from "../isolate";
import { breathe } from "../../core/timer-turn";
import type { WorkerEnv } from "../services";
import { TEMPLATE_HEADER } from "../../core/protocol";
import type { RecentRequest } from "../../store/tree/recent-requests";
import { errorMessageOf } from "../../observability/error-message";
import { withoutCredentials } from "../../core/credential";
import { CREDENTIALS } from "../../providers";
import { writeHitLines } from "../../observability/hit-lines";
import type { RequestLogLine } from "../../observability/log";
import type { RequestReport } from "../../observability/report";

const OUTCOMES = new Set(["hit", "miss", "bypass"]);

/**
 * The recent-requests row of a cached route's request (null for anything
 * else): its outcome (`template` when a template served it), latency, the
 * tokens a hit saved and the node that served it. Pure.
 */
export function recentRowOf(line: RequestLogLine, report: RequestReport | undefined, template: string | null, at = Date.now()): RecentRequest | null {
  if (!line.outcome || !OUTCOMES.has(line.outcome)) return null;
  const hit = line.outcome === "hit";
  const servedBy = hit ? report?.served : undefined;
  return {
    at,
    tree_id: line.tree,
    route: line.route,
    outcome: hit && template ? "template" : (line.outcome as RecentRequest["outcome"]),
    status: line.status,
    latency_ms: line.ms.total,
    prompt_tokens: servedBy?.promptTokens ?? null,
    completion_tokens: servedBy?.completionTokens ?? null,
    node: servedBy?.node ?? null,
    template_id: hit ? template : null,
    reason: line.reason,
    count: 1,
    request_id: line.request_id,
    explanation: null,
    error: null,
    tenant: report?.tenant ?? null,
  };
}

/** Why a template could have served and did not (response; set by the template lookup where it says). */
const TEMPLATE_MISS_HEADER = "muscle-mem-template-miss";

/**
 * Buffers the request for the recent-requests table beside the hit counters
 * (written with their next flush). A miss's row waits, after the response,
 * for its explanation (one D1 query after a timer turn: src/engine/explain/miss.ts); a failed
 * explanation leaves the row without one. Never breaks a request.
 */
export function rememberRequest(c: Context<WorkerEnv>, line: RequestLogLine): void {
  try {
    const row = recentRowOf(line, c.get("mm"), c.res.headers.get(TEMPLATE_HEADER));
    if (!row) return;
    const miss = row.outcome === "miss" ? c.get("mm")?.miss : undefined;
    const failed = row.status >= 400 ? c.res.clone() : null;
    if (!miss && !failed) {
      buffer(c, row);
      return;
    }
    const template = c.res.headers.get(TEMPLATE_MISS_HEADER);
    // An upstream's error may quote the key it refused: the row never keeps the request's credentials.
    const message = failed && errorMessageOf(failed, (m) => withoutCredentials(m, c.req.raw.headers, new URL(c.req.url), CREDENTIALS));
    // The explanation's D1 read starts after a timer turn, once the response is on its way (as the recording does:
    // src/engine/generation.ts): started here, it shared the thread with writing the response under wrangler dev.
    const explanation = miss
      ? breathe()
          .then(() => miss.explain(template))
          .catch(() => null)
      : null;
    c.executionCtx.waitUntil(Promise.all([explanation, message]).then(([explained, error]) => buffer(c, { ...row, explanation: explained, error })));
  } catch {
    // The recent-requests view is statistics, never correctness.
  }
}

function buffer(c: Context<WorkerEnv>, row: RecentRequest): void {
  try {
    const { config, isolate } = c.var.services;
    isolate.counters.request(row);
    scheduleFlush(c.env, config, c.executionCtx);
  } catch {
    // As above: statistics.
  }
}

/**
 * Counts a hit's request line into this isolate's `hits` lines (written with
 * the next counter flush, src/observability/hit-lines.ts). Never breaks a request.
 */
export function gatherHitLine(c: Context<WorkerEnv>, line: RequestLogLine): void {
  try {
    const { config, isolate } = c.var.services;
    const early = isolate.hitLines.add(line, c.res.headers.get(TEMPLATE_HEADER) !== null);
    if (early) writeHitLines([early]);
    scheduleFlush(c.env, config, c.executionCtx);
  } catch {
    // Logs are observability, never correctness.
  }
}
