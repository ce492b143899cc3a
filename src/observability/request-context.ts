import { AsyncLocalStorage } from "node:async_hooks";
import type { LogLevel } from "./log";
import type { StoreCost } from "./store-cost";

/**
 * What the async work of one request (or cron run, or object call) carries: its id and `LOG_LEVEL` for
 * every event line (./log-event.ts), and the meter its D1 queries and object calls are added to
 * (./store-meter.ts). One store for both, so that a request enters its context once, not once per concern.
 */
export interface RequestContext {
  requestId?: string;
  /** Unset: `info` (outside a request, or in a metered object call that set none). */
  level?: LogLevel;
  cost?: StoreCost;
}

const current = new AsyncLocalStorage<RequestContext>();

/** The context of the work that is running; undefined outside any. */
export function requestContext(): RequestContext | undefined {
  return current.getStore();
}

/**
 * Runs `fn` in `context`: everything it starts, however late (`waitUntil` work included), sees it.
 *
 * @example await inRequestContext({ requestId, level: "info", cost }, next)
 */
export function inRequestContext<T>(context: RequestContext, fn: () => T): T {
  return current.run(context, fn);
}
