import type { StoredAnswer } from "../cache/answer";
import { ExpiringMap } from "./expiring-map";

/**
 * A per-isolate memory of recently read answer sets, keyed by h_n. An entry
 * lives at most `ttlMs`, which bounds how long this isolate can serve a node
 * that was pruned or changed elsewhere. Only positive reads are kept: a miss
 * always asks D1 again. The map is bounded; the oldest entries go first.
 */
export class HotCache {
  private readonly entries: ExpiringMap<StoredAnswer[]>;

  constructor(
    private readonly ttlMs: number,
    maxEntries = 10_000,
  ) {
    this.entries = new ExpiringMap(maxEntries);
  }

  get(key: string, now = Date.now()): StoredAnswer[] | undefined {
    return this.entries.get(key, now);
  }

  /** Keeps `answers` for the TTL, or until `notAfter` when that is sooner (an entry read from the colo layer keeps its deadline). */
  set(key: string, answers: StoredAnswer[], now = Date.now(), notAfter = Infinity): void {
    if (this.ttlMs <= 0 || answers.length === 0 || notAfter <= now) return;
    this.entries.set(key, answers, Math.min(now + this.ttlMs, notAfter));
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}
