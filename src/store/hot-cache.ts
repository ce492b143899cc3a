import type { StoredAnswer } from "../cache/answer";
import { ExpiringMap } from "./expiring-map";

/** An answer set in memory, with the moment it was read from the store. */
export interface HotEntry {
  answers: StoredAnswer[];
  readAt: number;
}

/**
 * A per-isolate memory of recently read answer sets, keyed by h_n. An entry
 * lives at most `ttlMs`, which bounds how long this isolate can serve a node
 * that was pruned or changed elsewhere. Only positive reads are kept: a miss
 * always asks D1 again. The map is bounded; the oldest entries go first.
 * Each entry remembers when its answers were read from the store (`readAt`),
 * so that a hit can refresh it ahead of its bound (src/routes/flow/refresh-ahead.ts).
 */
export class HotCache {
  private readonly entries: ExpiringMap<HotEntry>;

  constructor(
    readonly ttlMs: number,
    maxEntries = 10_000,
  ) {
    this.entries = new ExpiringMap(maxEntries);
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
    if (this.ttlMs <= 0 || answers.length === 0 || notAfter <= now) return;
    this.entries.set(key, { answers, readAt }, Math.min(now + this.ttlMs, notAfter));
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}
