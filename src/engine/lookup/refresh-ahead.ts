import type { StoredAnswer } from "../../core/answer";
import type { ColoCache } from "./colo-cache";
import type { HotCache } from "./isolate-cache";
import { logEvent } from "../../observability/log-event";
import { keepRead } from "./remember-read";
import type { RefreshMarks } from "./refresh-marks";

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
 *
 * Refreshes are batched per shard: the keys of one shard (and bookmark) that
 * fall due within BATCH_WINDOW of the bound of each other are read in one
 * call (one D1 batch), at most MAX_BATCH_KEYS at a time. Keys read in one
 * batch share their read time, so they fall due together again: a tree hit
 * steadily on 240 paths costs about one refresh call per half bound, not 240.
 *
 * Refreshes are deduplicated per colo: a key whose colo entry another isolate
 * renewed is taken from there, and a key another isolate of the colo is
 * reading now (its mark, src/engine/lookup/refresh-marks.ts) is skipped. Reads
 * go to D1 from the Worker, never to the tree's object: a hot tree's writer
 * sees its misses only.
 */
export const REFRESH_AT = 0.5;
/** How long a batch gathers keys before it reads them, as a share of the bound (250 ms of 5 s by default)… */
export const BATCH_WINDOW = 0.05;
/** …and at most, whatever the bound. */
const MAX_BATCH_WINDOW_MS = 250;
/** Keys read by one refresh call at most; a fuller batch is read at once. */
export const MAX_BATCH_KEYS = 450;

/** Whether answers read from the store at `readAt` are due for a refresh (a bound of 0: never). */
export function refreshDue(readAt: number, boundMs: number, now = Date.now()): boolean {
  return boundMs > 0 && now - readAt >= boundMs * REFRESH_AT;
}

/** Where a refresh reads and keeps what it read. */
export interface RefreshTarget {
  hot: HotCache;
  colo: ColoCache | null;
  /** The staleness bound (COLO_CACHE_TTL_MS, or HOT_CACHE_TTL_MS without the colo layer): it sets the batch window. */
  boundMs: number;
  /** Which batch a key joins: the keys read the same way (one shard, one bookmark: one call reads them all). */
  batch: string;
  /** Reads the answers at several keys from D1 in one call (one batch, or replica sessions side by side). */
  read: (keys: string[]) => Promise<Map<string, StoredAnswer[]>>;
  /** Runs the refresh after the response (ctx.waitUntil). */
  defer: (work: Promise<unknown>) => void;
  /** This colo's refresh marks (null without the colo layer: then each isolate refreshes on its own). */
  marks?: RefreshMarks | null;
}

/** Keys this isolate is refreshing now: one refresh of a key at a time, however many hits arrive meanwhile. */
const refreshing = new Set<string>();
/** The batches gathering keys now, by `RefreshTarget.batch`. */
const gathering = new Map<string, string[]>();

/**
 * Starts a refresh of `key` after the response, unless one is running in this
 * isolate: it joins the batch its tree is gathering, or starts one. A batch is
 * read by a timer of the request that started it, and only that request waits
 * for it (ctx.waitUntil): its I/O stays in one request's context. A full
 * batch stops gathering (the next key starts another). Never throws.
 */
export function refreshAhead(target: RefreshTarget, key: string): void {
  if (refreshing.has(key)) return;
  refreshing.add(key);
  const gathered = gathering.get(target.batch);
  if (gathered) {
    gathered.push(key);
    if (gathered.length >= MAX_BATCH_KEYS) gathering.delete(target.batch);
    return;
  }
  const keys = [key];
  gathering.set(target.batch, keys);
  const windowMs = Math.min(MAX_BATCH_WINDOW_MS, Math.ceil(target.boundMs * BATCH_WINDOW));
  const work = new Promise((resolve) => setTimeout(resolve, windowMs))
    .then(() => {
      if (gathering.get(target.batch) === keys) gathering.delete(target.batch);
      return refresh(target, keys);
    })
    .catch((error: unknown) => logEvent("warn", "refresh_ahead_failed", { keys: keys.length, error: String(error) }))
    .finally(() => {
      for (const k of keys) refreshing.delete(k);
    });
  target.defer(work);
}

/** Reads `keys` again now (a batch's turn), unless this colo's layer or another isolate's mark makes that needless. */
export async function refresh({ hot, colo, read, marks }: RefreshTarget, keys: string[]): Promise<void> {
  // Another isolate of this colo may have refreshed a key already: take its entry instead of reading again.
  const shared = colo ? await Promise.all(keys.map((key) => colo.get(key).catch(() => undefined))) : [];
  const toRead: string[] = [];
  keys.forEach((key, i) => {
    const entry = shared[i];
    if (colo && entry && !refreshDue(entry.readAt, colo.ttlMs)) hot.set(key, entry.answers, Date.now(), entry.expiresAt, entry.readAt);
    else toRead.push(key);
  });
  // Another isolate of this colo is reading some of them: its answers reach the colo layer, where the next due hit takes them.
  const mine = marks && toRead.length > 0 ? await marks.claim(toRead) : toRead;
  if (mine.length === 0) return;
  const readAt = Date.now();
  const answersAt = await read(mine);
  await Promise.all(
    mine.map(async (key) => {
      // A record, prune or import of this isolate forgot the key while the read ran: what it read may be stale, keep or forget nothing.
      if (hot.staleRead(key, readAt)) return;
      const answers = answersAt.get(key) ?? [];
      if (answers.length === 0) {
        // Gone from the store (a prune elsewhere): stop serving it here now rather than at the bound.
        hot.delete(key);
        await colo?.delete(key).catch(() => undefined);
        return;
      }
      await keepRead(hot, colo, key, answers, readAt);
    }),
  );
}
