import type { LogLevel } from "./log";
import { inRequestContext, requestContext } from "./request-context";

/** What every event line of one request carries: its id, and the `LOG_LEVEL` it runs at. */
export interface LogContext {
  requestId?: string;
  level: LogLevel;
}

const RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3, off: 4 };

/**
 * Runs `fn` with `context`: every `logEvent` inside it, however deep and
 * however late (`waitUntil` work included), is filtered by its level and
 * carries its request id.
 *
 * @example await withLogContext({ requestId, level: "info" }, next)
 */
export function withLogContext<T>(context: LogContext, fn: () => T): T {
  // The running store meter (./store-meter.ts) carries on inside: the context holds both (./request-context.ts).
  return inRequestContext({ requestId: context.requestId, level: context.level, cost: requestContext()?.cost }, fn);
}

/**
 * Writes one JSON line `{event, level, request_id?, ...fields}` when `level`
 * is at or above the running `LOG_LEVEL` (outside any context: `info`).
 * Fields hold ids, counts and error messages only: never keys or message content.
 *
 * @example logEvent("error", "record_failed", { tree: treeId, error: String(error) })
 */
export function logEvent(level: Exclude<LogLevel, "off">, event: string, fields: Record<string, unknown> = {}): void {
  const context = requestContext();
  if (RANK[level] < RANK[context?.level ?? "info"]) return;
  const text = JSON.stringify({ event, level, ...(context?.requestId ? { request_id: context.requestId } : {}), ...fields });
  if (level === "error") console.error(text);
  else if (level === "warn") console.warn(text);
  else console.log(text);
}
