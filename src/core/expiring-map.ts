/**
 * A bounded per-isolate map whose entries expire: `get` drops an entry past
 * its deadline, `set` keeps at most `maxEntries` entries and at most
 * `maxWeight` of their weights together (the oldest set goes first).
 * The isolate's hot answers (hot-cache.ts) and its tree -> shard memory
 * (directory.ts) are both this map.
 */
export class ExpiringMap<V> {
  private readonly entries = new Map<string, { value: V; expiresAt: number; weight: number }>();
  private weight = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly maxWeight = Infinity,
  ) {}

  get(key: string, now = Date.now()): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= now) {
      this.delete(key);
      return undefined;
    }
    return entry.value;
  }

  /** Keeps `value` until `expiresAt` (ms since the epoch), as the newest entry; `weight` counts against `maxWeight`. */
  set(key: string, value: V, expiresAt: number, weight = 0): void {
    this.delete(key);
    this.entries.set(key, { value, expiresAt, weight });
    this.weight += weight;
    while (this.entries.size > this.maxEntries || (this.weight > this.maxWeight && this.entries.size > 1)) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.delete(oldest);
    }
  }

  delete(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.weight -= entry.weight;
  }

  clear(): void {
    this.entries.clear();
    this.weight = 0;
  }

  /** The weights of the entries held, together (expired ones count until they are dropped). */
  get totalWeight(): number {
    return this.weight;
  }

  get size(): number {
    return this.entries.size;
  }
}
