import { AsyncLocalStorage } from "node:async_hooks";
import type { LogLevel } from "./log";

/** What every event line of one request carries: its id, and the `LOG_LEVEL` it runs at. */
export interface LogContext {
  requestId?: string;
  level: LogLevel;
}

/** The context of the request (or cron run) whose async work is running; none in a Durable Object. */
const current = new AsyncLocalStorage<LogContext>();

const RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3, off: 4 };

/**
 * Runs `fn` with `context`: every `logEvent` inside it, however deep and
 * however late (`waitUntil` work included), is filtered by its level and
 * carries its request id.
 *
 * @example await withLogContext({ requestId, level: "info" }, next)
 */
export function withLogContext<T>(context: LogContext, fn: () => T): T {
  return current.run(context, fn);
}

/**
 * Writes one JSON line `{event, level, request_id?, ...fields}` when `level`
 * is at or above the running `LOG_LEVEL` (outside any context: `info`).
 * Fields hold ids, counts and error messages only: never keys or message content.
 *
 * @example logEvent("error", "record_failed", { tree: treeId, error: String(error) })
 */
export function logEvent(level: Exclude<LogLevel, "off">, event: string, fields: Record<string, unknown> = {}): void {
  const context = current.getStore();
  if (RANK[level] < RANK[context?.level ?? "info"]) return;
  const text = JSON.stringify({ event, level, ...(context?.requestId ? { request_id: context.requestId } : {}), ...fields });
  if (level === "error") console.error(text);
  else if (level === "warn") console.warn(text);
  else console.log(text);
}
