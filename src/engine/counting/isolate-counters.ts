import type { RecentRequest } from "../../store/tree/recent-requests";
import { addRecent } from "../../store/tree/recent-gather";
import { emptyTally, tallyRows, type TallyBatch } from "../../store/tree/tally-batch";

/** Row updates per flush: well under D1's per-invocation statement limit. */
export const MAX_ROWS_PER_FLUSH = 400;

/**
 * Counts hits and bypasses (and the recent-requests rows) in isolate memory,
 * one tally per tree, and hands them on at most once per flush interval
 * (COUNTER_FLUSH_MS): to each tree's HitTally object, which writes D1 at most
 * once per TALLY_FLUSH_MS for the whole deployment (src/store/objects/hit-tally.ts).
 * Hits cost no D1 write of their own. Counts still buffered when an isolate is
 * evicted are lost: the counters are statistics, never correctness.
 */
export class Counters {
  private readonly tallies = new Map<string, TallyBatch>();
  private scheduled = false;

  private tally(treeId: string): TallyBatch {
    let tally = this.tallies.get(treeId);
    if (!tally) {
      tally = emptyTally(treeId);
      this.tallies.set(treeId, tally);
    }
    return tally;
  }

  private tree(treeId: string): NonNullable<TallyBatch["tree"]> {
    const tally = this.tally(treeId);
    tally.tree ??= { hits: 0, bypasses: 0, promptTokens: 0, completionTokens: 0, latencyMs: 0, lastHitAt: 0 };
    return tally.tree;
  }

  hit(treeId: string, nodeHash: string, saved: { promptTokens: number; completionTokens: number; latencyMs: number }, now = Date.now()): void {
    const delta = this.tree(treeId);
    delta.hits++;
    delta.promptTokens += saved.promptTokens;
    delta.completionTokens += saved.completionTokens;
    delta.latencyMs += saved.latencyMs;
    delta.lastHitAt = now;
    const nodes = this.tally(treeId).nodes;
    const node = nodes[nodeHash] ?? { hits: 0, lastHitAt: 0 };
    nodes[nodeHash] = { hits: node.hits + 1, lastHitAt: now };
  }

  /** One more hit served by a learned template of `treeId` (counted besides the tree's hit). */
  templateHit(treeId: string, templateId: string): void {
    const templates = this.tally(treeId).templates;
    templates[templateId] = (templates[templateId] ?? 0) + 1;
  }

  bypass(treeId: string): void {
    this.tree(treeId).bypasses++;
  }

  /** One answered request for the recent-requests table (hits and bypasses gathered per group, src/store/tree/recent-gather.ts). */
  request(row: RecentRequest): void {
    addRecent(this.tally(row.tree_id ?? "").recent, [row]);
  }

  /** Whether counts wait and no flush is scheduled yet. */
  due(): boolean {
    // Asked on every hit: while a flush is scheduled (nearly always under load) it is answered without a scan.
    if (this.scheduled) return false;
    for (const tally of this.tallies.values()) if (tallyRows(tally) > 0) return true;
    return false;
  }

  /** How many rows wait to be updated (a tree's recent rows count as one). */
  pending(): number {
    let rows = 0;
    for (const tally of this.tallies.values()) rows += tallyRows(tally);
    return rows;
  }

  markScheduled(): void {
    this.scheduled = true;
  }

  /**
   * Removes and returns up to `maxRows` rows of counts, a tally per tree; the
   * rest stay buffered for the next flush (one invocation may run only so
   * many D1 statements or calls).
   */
  drain(maxRows = MAX_ROWS_PER_FLUSH): TallyBatch[] {
    this.scheduled = false;
    const out: TallyBatch[] = [];
    let budget = maxRows;
    for (const [treeId, tally] of this.tallies) {
      if (budget <= 0) break;
      const part = emptyTally(treeId);
      if (tally.tree && budget > 0) {
        part.tree = tally.tree;
        tally.tree = null;
        budget--;
      }
      if (tally.recent.length > 0 && budget > 0) {
        part.recent = tally.recent;
        tally.recent = [];
        budget--;
      }
      budget = moveEntries(tally.nodes, part.nodes, budget);
      budget = moveEntries(tally.templates, part.templates, budget);
      out.push(part);
      if (tallyRows(tally) === 0) this.tallies.delete(treeId);
    }
    return out;
  }
}

/** Moves up to `budget` entries from `from` to `to`; returns the budget left. */
function moveEntries<V>(from: Record<string, V>, to: Record<string, V>, budget: number): number {
  for (const key of Object.keys(from)) {
    if (budget <= 0) break;
    to[key] = from[key];
    delete from[key];
    budget--;
  }
  return budget;
}
