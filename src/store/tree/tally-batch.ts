import { recentStatements, type RecentRequest } from "./recent-requests";
import { addRecent } from "./recent-gather";

/** What hits and bypasses add to a tree's row. */
export interface TreeDelta {
  hits: number;
  bypasses: number;
  promptTokens: number;
  completionTokens: number;
  latencyMs: number;
  lastHitAt: number;
}

/**
 * The counts of one tree gathered somewhere (an isolate between flushes, or
 * the tree's HitTally object between its D1 writes): one D1 batch writes it.
 */
export interface TallyBatch {
  treeId: string;
  tree: TreeDelta | null;
  nodes: Record<string, { hits: number; lastHitAt: number }>;
  templates: Record<string, number>;
  recent: RecentRequest[];
}

/** An empty tally for `treeId`. */
export function emptyTally(treeId: string): TallyBatch {
  return { treeId, tree: null, nodes: {}, templates: {}, recent: [] };
}

/** How many row updates a tally holds (the recent rows are one statement). */
export function tallyRows(batch: TallyBatch): number {
  return (batch.tree ? 1 : 0) + Object.keys(batch.nodes).length + Object.keys(batch.templates).length + (batch.recent.length > 0 ? 1 : 0);
}

/** Adds `more` into `into` (sums, the latest hit time, recent rows gathered by src/store/tree/recent-gather.ts). */
export function mergeTally(into: TallyBatch, more: TallyBatch): TallyBatch {
  if (more.tree) {
    const t = into.tree ?? { hits: 0, bypasses: 0, promptTokens: 0, completionTokens: 0, latencyMs: 0, lastHitAt: 0 };
    into.tree = {
      hits: t.hits + more.tree.hits,
      bypasses: t.bypasses + more.tree.bypasses,
      promptTokens: t.promptTokens + more.tree.promptTokens,
      completionTokens: t.completionTokens + more.tree.completionTokens,
      latencyMs: t.latencyMs + more.tree.latencyMs,
      lastHitAt: Math.max(t.lastHitAt, more.tree.lastHitAt),
    };
  }
  for (const [hash, n] of Object.entries(more.nodes)) {
    const known = into.nodes[hash];
    into.nodes[hash] = known ? { hits: known.hits + n.hits, lastHitAt: Math.max(known.lastHitAt, n.lastHitAt) } : { ...n };
  }
  for (const [id, hits] of Object.entries(more.templates)) into.templates[id] = (into.templates[id] ?? 0) + hits;
  addRecent(into.recent, more.recent);
  return into;
}

/**
 * The statements that write tallies to one database: one UPDATE per tree,
 * node and template row (columns of src/store/tree/schema.ts), and the recent
 * rows as one insert and one cap.
 */
export function tallyStatements(db: D1Database, batches: readonly TallyBatch[]): D1PreparedStatement[] {
  const out: D1PreparedStatement[] = [];
  const recent: RecentRequest[] = [];
  for (const batch of batches) {
    const d = batch.tree;
    if (d) {
      out.push(
        db
          .prepare(
            "UPDATE trees SET hits = hits + ?1, bypasses = bypasses + ?2, prompt_tokens_saved = prompt_tokens_saved + ?3, " +
              "completion_tokens_saved = completion_tokens_saved + ?4, latency_saved_ms = latency_saved_ms + ?5, " +
              "last_hit_at = CASE WHEN ?6 > 0 THEN max(coalesce(last_hit_at, 0), ?6) ELSE last_hit_at END WHERE id = ?7",
          )
          .bind(d.hits, d.bypasses, d.promptTokens, d.completionTokens, d.latencyMs, d.lastHitAt, batch.treeId),
      );
    }
    for (const [hash, n] of Object.entries(batch.nodes)) {
      out.push(
        db.prepare("UPDATE nodes SET hits = hits + ?1, last_hit_at = max(coalesce(last_hit_at, 0), ?2) WHERE hash = ?3").bind(n.hits, n.lastHitAt, hash),
      );
    }
    for (const [id, hits] of Object.entries(batch.templates)) {
      out.push(db.prepare("UPDATE templates SET hits = hits + ?1 WHERE id = ?2").bind(hits, id));
    }
    recent.push(...batch.recent);
  }
  return recent.length > 0 ? [...out, ...recentStatements(db, recent)] : out;
}

/** Writes tallies to one database in one batch; nothing to write is no query. */
export async function writeTallies(db: D1Database, batches: readonly TallyBatch[]): Promise<void> {
  const statements = tallyStatements(db, batches);
  if (statements.length > 0) await db.batch(statements);
}
