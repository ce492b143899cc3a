import type { StoredAnswer } from "../../cache/answer";
import type { ServePolicy } from "../../cache/policy";
import type { ColoCache } from "../../store/colo-cache";
import type { HotCache } from "../../store/hot-cache";
import { logEvent } from "../../observability/log-event";
import { lookUpFar, type FarLookup } from "./far-lookup";
import { keepRead } from "./keep-read";

/**
 * Refresh ahead: a hit served from isolate memory or the colo layer whose
 * answers were read from the store more than half the staleness bound ago (COLO_CACHE_TTL_MS, or HOT_CACHE_TTL_MS with the colo layer off)
 * reads them again after the response, so that a path hit steadily never goes
 * cold: its hits make no D1 query and no Durable Object call, however many
 * TTL windows it lives through. The bound itself is unchanged: an entry is
 * still never served longer than the TTL after its own read, and a refresh
 * that finds the answers gone (pruned elsewhere) forgets them at once.
 *
 * Half, not later: the refresh has the other half of the bound to land
 * before the entry expires. Paths read together (a burst of cold reads) fall
 * due together, and under `wrangler dev` their refreshes queue on one thread;
 * at three quarters, 240 such paths outran their last 1.25 s and each went
 * cold once (docs/performance.md, floors). At most one read per key per
 * isolate per half bound (2.5 s with the defaults).
 */
export const REFRESH_AT = 0.5;

/** Whether answers read from the store at `readAt` are due for a refresh (a bound of 0: never). */
export function refreshDue(readAt: number, boundMs: number, now = Date.now()): boolean {
  return boundMs > 0 && now - readAt >= boundMs * REFRESH_AT;
}

/** Keys this isolate is refreshing now: one refresh of a key at a time, however many hits arrive meanwhile. */
const refreshing = new Set<string>();

/** Where a refresh reads and keeps what it read. */
export interface RefreshTarget {
  hot: HotCache;
  colo: ColoCache | null;
  /** Reads the answers at a key from the store: the tree's object, or D1 itself (with read replication). */
  read: (key: string) => Promise<StoredAnswer[]>;
  /** Runs the refresh after the response (ctx.waitUntil). */
  defer: (work: Promise<unknown>) => void;
}

/** Starts a refresh of `key` after the response, unless one is running in this isolate. Never throws. */
export function refreshAhead(target: RefreshTarget, key: string): void {
  if (refreshing.has(key)) return;
  refreshing.add(key);
  const work = refresh(target, key)
    .catch((error: unknown) => logEvent("warn", "refresh_ahead_failed", { error: String(error) }))
    .finally(() => refreshing.delete(key));
  target.defer(work);
}

async function refresh({ hot, colo, read }: RefreshTarget, key: string): Promise<void> {
  // Another isolate of this colo may have refreshed the key already: take its entry instead of reading again.
  const shared = await colo?.get(key).catch(() => undefined);
  if (colo && shared && !refreshDue(shared.readAt, colo.ttlMs)) {
    hot.set(key, shared.answers, Date.now(), shared.expiresAt, shared.readAt);
    return;
  }
  const readAt = Date.now();
  const answers = await read(key);
  // A record, prune or import of this isolate forgot the key while the read ran: what it read may be stale, keep or forget nothing.
  if (hot.staleRead(key, readAt)) return;
  if (answers.length === 0) {
    // Gone from the store (a prune elsewhere): stop serving it here now rather than at the bound.
    hot.delete(key);
    await colo?.delete(key);
    return;
  }
  await keepRead(hot, colo, key, answers, readAt);
}

/** The read of a refresh through the tree's object: no single-flight join and no template check, just the answers. */
export function readThroughObject(far: FarLookup, policy: ServePolicy, timeoutMs: number): (key: string) => Promise<StoredAnswer[]> {
  return async (key) => (await lookUpFar({ ...far, join: false, templates: false }, { key, policy, timeoutMs })).answers;
}
