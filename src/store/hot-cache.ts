import type { StoredAnswer } from "../cache/answer";

interface Entry {
  answers: StoredAnswer[];
  expiresAt: number;
}

/**
 * A per-isolate memory of recently read answer sets, keyed by h_n. An entry
 * lives at most `ttlMs`, which bounds how long this isolate can serve a node
 * that was pruned or changed elsewhere. Only positive reads are kept: a miss
 * always asks D1 again. The map is bounded; the oldest entries go first.
 */
export class HotCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  get(key: string, now = Date.now()): StoredAnswer[] | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= now) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.answers;
  }

  /** Keeps `answers` for the TTL, or until `notAfter` when that is sooner (an entry read from the colo layer keeps its deadline). */
  set(key: string, answers: StoredAnswer[], now = Date.now(), notAfter = Infinity): void {
    if (this.ttlMs <= 0 || answers.length === 0 || notAfter <= now) return;
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.delete(key);
    this.entries.set(key, { answers, expiresAt: Math.min(now + this.ttlMs, notAfter) });
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}
