/**
 * What a tree's writer object wrote lately, by answer key (the parent hash whose
 * answers a recording adds an observation to), and the writes that may change
 * any key (imports, prunes, moves: `"tree"`). A cold lookup whose Worker already
 * read the tree's primary asks `quiet` before it trusts that read instead of
 * reading again (src/store/objects/lookup-or-join.ts): a write that could have
 * landed after the read, or one still running, sends it back to D1. The times
 * are this object's clock; a key is kept `keepMs` after its last write, and a
 * question about longer ago than that is answered "not quiet" (in doubt, read).
 */
export class RecentWrites {
  /** Key → when its last write ended; oldest first (a key written again moves to the end). */
  private readonly ended = new Map<string, number>();
  /** Key → writes of it still running. */
  private readonly running = new Map<string, number>();
  private treeRunning = 0;
  private treeEndedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly keepMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Runs `work`, a write of the answers at `keys` (or of anything in the tree), marked from its start to its end. */
  async during<T>(keys: readonly string[] | "tree", work: () => Promise<T>): Promise<T> {
    const marked = keys === "tree" ? [] : [...new Set(keys)];
    if (keys === "tree") this.treeRunning++;
    for (const key of marked) this.running.set(key, (this.running.get(key) ?? 0) + 1);
    try {
      return await work();
    } finally {
      // After the write's outcome (even a failure: it may have committed): its commit is no later than now.
      const at = this.now();
      if (keys === "tree") {
        this.treeRunning--;
        this.treeEndedAt = at;
      }
      for (const key of marked) {
        const left = (this.running.get(key) ?? 1) - 1;
        if (left > 0) this.running.set(key, left);
        else this.running.delete(key);
        this.ended.delete(key);
        this.ended.set(key, at);
      }
      this.sweep(at);
    }
  }

  /**
   * Whether nothing this object wrote in the last `withinMs` (or is writing now) could have changed the
   * answers at `key`. A write that ended exactly `withinMs` ago counts as within (a coarse clock).
   */
  quiet(key: string, withinMs: number): boolean {
    if (!(withinMs >= 0) || withinMs >= this.keepMs) return false;
    if (this.treeRunning > 0 || this.running.has(key)) return false;
    const since = this.now() - withinMs;
    return this.treeEndedAt < since && (this.ended.get(key) ?? Number.NEGATIVE_INFINITY) < since;
  }

  /** Keys kept (for tests: memory stays bounded by the keys written within `keepMs`). */
  get size(): number {
    return this.ended.size;
  }

  private sweep(now: number): void {
    for (const [key, at] of this.ended) {
      if (at > now - this.keepMs) break;
      this.ended.delete(key);
    }
  }
}
