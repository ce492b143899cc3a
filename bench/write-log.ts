/**
 * Counting the D1 writes hits cause, from the D1 side: SQLite triggers in the
 * local database log every row the hit counters and the recent-requests
 * table write (the table, the row's key, the time), so a benchmark reads what
 * was written instead of assuming it.
 */

/** The log table and one trigger per hit-caused write (UPDATE of the counter columns, INSERT / DELETE of recent rows). */
export const WRITE_LOG_SQL = [
  "CREATE TABLE IF NOT EXISTS bench_writes (at REAL NOT NULL, tbl TEXT NOT NULL, key TEXT)",
  // julianday('now') is fixed per statement: the rows of one UPDATE share a time.
  ...[
    ["nodes", "UPDATE OF hits, last_hit_at ON nodes", "NEW.hash"],
    ["trees", "UPDATE OF hits, bypasses, last_hit_at ON trees", "NEW.id"],
    ["templates", "UPDATE OF hits ON templates", "NEW.id"],
    ["recent_insert", "INSERT ON recent_requests", "NEW.id"],
    ["recent_delete", "DELETE ON recent_requests", "OLD.id"],
  ].map(
    ([tbl, event, key]) =>
      `CREATE TRIGGER IF NOT EXISTS bench_log_${tbl} AFTER ${event} BEGIN INSERT INTO bench_writes VALUES ((julianday('now') - 2440587.5) * 86400000.0, '${tbl}', ${key}); END`,
  ),
].join(";\n");

/** One logged row write. */
export interface Write {
  at: number;
  tbl: string;
  key: string;
}

/** The largest number of writes (matching `pick`) within any window of `windowMs` that starts at a write. */
export function maxInWindow(writes: readonly Write[], windowMs: number, pick: (w: Write) => boolean = () => true): number {
  const times = writes
    .filter(pick)
    .map((w) => w.at)
    .sort((a, b) => a - b);
  let best = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    while (j < times.length && times[j] < times[i] + windowMs) j++;
    best = Math.max(best, j - i);
  }
  return best;
}

/** The most writes of any one row of `tbl` within any window of `windowMs`. */
export function maxPerRow(writes: readonly Write[], tbl: string, windowMs: number): number {
  const byKey = new Map<string, Write[]>();
  for (const w of writes) if (w.tbl === tbl) byKey.set(w.key, [...(byKey.get(w.key) ?? []), w]);
  let best = 0;
  for (const rows of byKey.values()) best = Math.max(best, maxInWindow(rows, windowMs));
  return best;
}

/** Writes per table. */
export function countByTable(writes: readonly Write[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const w of writes) out[w.tbl] = (out[w.tbl] ?? 0) + 1;
  return out;
}

/** How many bursts the writes came in (a gap of more than `gapMs` starts a new one): about the D1 batches that wrote them. */
export function bursts(writes: readonly Write[], gapMs = 500): number {
  const times = writes.map((w) => w.at).sort((a, b) => a - b);
  let n = 0;
  for (let i = 0; i < times.length; i++) if (i === 0 || times[i] - times[i - 1] > gapMs) n++;
  return n;
}
