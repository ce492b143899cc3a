import type { StoredAnswer } from "../../core/answer";
import { ExpiringMap } from "../../core/expiring-map";

/** How long a forget is remembered: longer than any store read may take (LOOKUP_TIMEOUT_MS bounds them). */
const FORGET_MEMORY_MS = 60_000;
/**
 * The answer sets one isolate keeps, at most: by count, and by the size of
 * their messages as JSON (an isolate has 128 MB in all; the parsed objects
 * take a few times their JSON size).
 */
export const HOT_MAX_ENTRIES = 10_000;
export const HOT_MAX_BYTES = 16 * 1024 * 1024;

/** About how much memory an answer set takes: its messages' JSON length (UTF-16 code units). */
function sizeOf(answers: readonly StoredAnswer[]): number {
  let n = 0;
  for (const a of answers) n += JSON.stringify(a.message).length + 200;
  return n;
}

/** An answer set in memory, with the moment it was read from the store. */
export interface HotEntry {
  answers: StoredAnswer[];
  readAt: number;
}

/**
 * A per-isolate memory of recently read answer sets, keyed by h_n. An entry
 * lives at most `ttlMs`, which bounds how long this isolate can serve a node
 * that was pruned or changed elsewhere. Only positive reads are kept: a miss
 * always asks D1 again. The map is bounded by count and by size
 * (HOT_MAX_ENTRIES, HOT_MAX_BYTES); the oldest entries go first.
 * Each entry remembers when its answers were read from the store (`readAt`),
 * so that a hit can refresh it ahead of its bound (src/engine/lookup/refresh-ahead.ts).
 *
 * It also remembers when each key was forgotten (a record, prune or import
 * in this isolate): answers whose read began at or before that moment are
 * never kept again (`staleRead`), so that a read racing a write of this
 * isolate cannot put back what the write made stale.
 */
export class HotCache {
  private readonly entries: ExpiringMap<HotEntry>;
  private readonly forgotten: ExpiringMap<number>;
  private clearedAt = Number.NEGATIVE_INFINITY;

  constructor(
    readonly ttlMs: number,
    maxEntries = HOT_MAX_ENTRIES,
    maxBytes = HOT_MAX_BYTES,
  ) {
    this.entries = new ExpiringMap(maxEntries, maxBytes);
    this.forgotten = new ExpiringMap(maxEntries);
  }

  /** Whether answers read from the store at `readAt` predate a forget of `key` here (or of everything): then they are not kept. */
  staleRead(key: string, readAt: number, now = Date.now()): boolean {
    return readAt <= this.clearedAt || readAt <= (this.forgotten.get(key, now) ?? Number.NEGATIVE_INFINITY);
  }

  get(key: string, now = Date.now()): StoredAnswer[] | undefined {
    return this.entries.get(key, now)?.answers;
  }

  /** The answers at `key` and when they were read from the store (D1 or the tree's object). */
  entry(key: string, now = Date.now()): HotEntry | undefined {
    return this.entries.get(key, now);
  }

  /**
   * Keeps `answers` for the TTL, or until `notAfter` when that is sooner (an
   * entry read from the colo layer keeps its deadline). `readAt` is when they
   * were read from the store (now, unless they came through the colo layer).
   */
  set(key: string, answers: StoredAnswer[], now = Date.now(), notAfter = Infinity, readAt = now): void {
    if (this.ttlMs <= 0 || answers.length === 0 || notAfter <= now || this.staleRead(key, readAt, now)) return;
    this.entries.set(key, { answers, readAt }, Math.min(now + this.ttlMs, notAfter), sizeOf(answers));
  }

  /** Forgets `key`, and remembers when (for FORGET_MEMORY_MS), so that no read that began before it is kept. */
  delete(key: string, now = Date.now()): void {
    this.entries.delete(key);
    this.forgotten.set(key, now, now + FORGET_MEMORY_MS);
  }

  /** About how many bytes the kept answer sets take (for tests and the bench). */
  get bytes(): number {
    return this.entries.totalWeight;
  }

  /** Forgets everything, and that no read that began before now may be kept. */
  clear(now = Date.now()): void {
    this.entries.clear();
    this.clearedAt = now;
  }
}
