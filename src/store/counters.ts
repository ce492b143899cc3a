import { inArray, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { drizzle, type DrizzleD1Database } from "drizzle-orm/d1";
import { RECENT_BUFFERED, recentStatements, type RecentRequest } from "./recent";
import { nodes, templates, trees } from "./schema";

interface TreeDelta {
  hits: number;
  bypasses: number;
  promptTokens: number;
  completionTokens: number;
  latencyMs: number;
  lastHitAt: number;
}

/**
 * Counts hits and bypasses in isolate memory and writes them to D1 in one
 * batch at most once per flush interval (COUNTER_FLUSH_MS), so that hits cost no D1 write of their own.
 * Counts still buffered when an isolate is evicted are lost: the counters are
 * statistics, never correctness.
 */
/** Row updates per flush: well under D1's per-invocation statement limit. */
export const MAX_ROWS_PER_FLUSH = 400;

/** Removes and returns up to `n` entries of `map` (oldest first). */
function take<K, V>(map: Map<K, V>, n: number): Map<K, V> {
  const out = new Map<K, V>();
  for (const [k, v] of map) {
    if (out.size >= n) break;
    out.set(k, v);
  }
  for (const k of out.keys()) map.delete(k);
  return out;
}

export class Counters {
  private treeDeltas = new Map<string, TreeDelta>();
  private nodeHits = new Map<string, { treeId: string; hits: number; lastHitAt: number }>();
  private templateHits = new Map<string, { treeId: string; hits: number }>();
  private recent: RecentRequest[] = [];
  private scheduled = false;

  private tree(treeId: string): TreeDelta {
    let delta = this.treeDeltas.get(treeId);
    if (!delta) {
      delta = { hits: 0, bypasses: 0, promptTokens: 0, completionTokens: 0, latencyMs: 0, lastHitAt: 0 };
      this.treeDeltas.set(treeId, delta);
    }
    return delta;
  }

  hit(treeId: string, nodeHash: string, saved: { promptTokens: number; completionTokens: number; latencyMs: number }, now = Date.now()): void {
    const delta = this.tree(treeId);
    delta.hits++;
    delta.promptTokens += saved.promptTokens;
    delta.completionTokens += saved.completionTokens;
    delta.latencyMs += saved.latencyMs;
    delta.lastHitAt = now;
    const node = this.nodeHits.get(nodeHash) ?? { treeId, hits: 0, lastHitAt: 0 };
    node.hits++;
    node.lastHitAt = now;
    this.nodeHits.set(nodeHash, node);
  }

  /** One more hit served by a learned template of `treeId` (counted besides the tree's hit). */
  templateHit(treeId: string, templateId: string): void {
    const template = this.templateHits.get(templateId) ?? { treeId, hits: 0 };
    template.hits++;
    this.templateHits.set(templateId, template);
  }

  bypass(treeId: string): void {
    this.tree(treeId).bypasses++;
  }

  /** One answered request for the recent-requests table (the oldest buffered go beyond RECENT_BUFFERED). */
  request(row: RecentRequest): void {
    this.recent.push(row);
    if (this.recent.length > RECENT_BUFFERED) this.recent.splice(0, this.recent.length - RECENT_BUFFERED);
  }

  /** Whether counts wait and no flush is scheduled yet. */
  due(): boolean {
    return this.pending() > 0 && !this.scheduled;
  }

  /** How many rows wait to be updated. */
  pending(): number {
    return this.treeDeltas.size + this.nodeHits.size + this.templateHits.size + this.recent.length;
  }

  markScheduled(): void {
    this.scheduled = true;
  }

  /**
   * Writes and clears the buffered counts, at most `maxRows` row updates per
   * flush (one Worker invocation may run only so many D1 statements); the
   * rest stay buffered for the next flush. Each tree's counts go to the
   * database `dbOf` names for it (its shard), one batch per database.
   * Failures drop the counts, never the request.
   */
  async flush(dbOf: (treeId: string) => D1Database, maxRows = MAX_ROWS_PER_FLUSH): Promise<void> {
    this.scheduled = false;
    if (this.pending() === 0) return;
    let budget = maxRows;
    const treeDeltas = take(this.treeDeltas, budget);
    budget -= treeDeltas.size;
    const nodeHits = take(this.nodeHits, budget);
    budget -= nodeHits.size;
    const templateHits = take(this.templateHits, budget);
    const recent = this.recent.splice(0);
    const batches = new Map<D1Database, BatchItem<"sqlite">[]>();
    const add = (treeId: string, build: (orm: DrizzleD1Database) => BatchItem<"sqlite">) => {
      const db = dbOf(treeId);
      const list = batches.get(db) ?? [];
      list.push(build(drizzle(db)));
      batches.set(db, list);
    };
    for (const [id, d] of treeDeltas) {
      add(id, (orm) =>
        orm
          .update(trees)
          .set({
            hits: sql`${trees.hits} + ${d.hits}`,
            bypasses: sql`${trees.bypasses} + ${d.bypasses}`,
            promptTokensSaved: sql`${trees.promptTokensSaved} + ${d.promptTokens}`,
            completionTokensSaved: sql`${trees.completionTokensSaved} + ${d.completionTokens}`,
            latencySavedMs: sql`${trees.latencySavedMs} + ${d.latencyMs}`,
            ...(d.lastHitAt ? { lastHitAt: d.lastHitAt } : {}),
          })
          .where(inArray(trees.id, [id])),
      );
    }
    for (const [hash, n] of nodeHits) {
      add(n.treeId, (orm) =>
        orm
          .update(nodes)
          .set({ hits: sql`${nodes.hits} + ${n.hits}`, lastHitAt: n.lastHitAt })
          .where(inArray(nodes.hash, [hash])),
      );
    }
    for (const [id, n] of templateHits) {
      add(n.treeId, (orm) => orm.update(templates).set({ hits: sql`${templates.hits} + ${n.hits}` }).where(inArray(templates.id, [id])));
    }
    // Recent requests: one batch per database of one insert (every row as one JSON parameter) and one cap.
    const recentByDb = new Map<D1Database, RecentRequest[]>();
    for (const row of recent) {
      const db = dbOf(row.tree_id ?? "");
      recentByDb.set(db, [...(recentByDb.get(db) ?? []), row]);
    }
    await Promise.all([
      ...[...batches].map(([db, statements]) => drizzle(db).batch(statements as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]])),
      ...[...recentByDb].map(([db, rows]) => db.batch(recentStatements(db, rows))),
    ]);
  }
}
