import { DurableObject } from "cloudflare:workers";
import { logEvent } from "../../observability/log-event";
import { homeShard } from "../shards/directory";
import { emptyTally, mergeTally, tallyRows, writeTallies, type TallyBatch } from "../tree/tally-batch";
import { tallyPages } from "../tree/tally-pages";

/** When a D1 write failed, the next try. */
const RETRY_MS = 10_000;
/** When a write left pages for later (MAX_PAGES_PER_WRITE), the next one. */
const NEXT_PAGE_MS = 1_000;
/**
 * Distinct nodes one tree gathers between writes. A hit on a node beyond them still counts on the tree's row;
 * the node's own count is dropped (and logged): counters are statistics, and memory stays bounded.
 */
export const MAX_PENDING_NODES = 50_000;
/** Row updates per D1 batch. */
export const PAGE_ROWS = 250;
/** Batches per write (each is one D1 call of the alarm's invocation); what is left waits NEXT_PAGE_MS. */
export const MAX_PAGES_PER_WRITE = 40;

/**
 * One object per tree (`idFromName(treeId)` in HIT_TALLY) that gathers the hit counts every isolate sends
 * (Counters, once per COUNTER_FLUSH_MS each) in memory and writes them to the tree's D1 shard at most once
 * per `flushMs` (TALLY_FLUSH_MS): D1 writes caused by hits are at most one per node per interval for the
 * whole deployment, whatever the number of isolates. `flushMs` 0 writes at once.
 *
 * Its own storage is written once per interval (the alarm), never per add: what is pending lives in memory
 * and is lost if the object is evicted before its alarm (counts, never correctness). Memory is bounded
 * (MAX_PENDING_NODES per tree) and a write goes in pages of PAGE_ROWS updates, MAX_PAGES_PER_WRITE at a time.
 */
export class HitTally extends DurableObject<Env> {
  private pending: TallyBatch | null = null;
  private armed = false;
  private dropped = 0;

  /** Adds counts; the first addition after a write sets the alarm that writes them. */
  async add(batch: TallyBatch, flushMs: number): Promise<void> {
    this.pending = this.merge(this.pending ?? emptyTally(batch.treeId), batch);
    if (flushMs <= 0) return this.write();
    if (!this.armed) {
      this.armed = true;
      await this.ctx.storage.setAlarm(Date.now() + flushMs);
    }
  }

  /** How many rows wait for the next write (for tests and the dashboard's delay note). */
  async pendingRows(): Promise<number> {
    return this.pending ? tallyRows(this.pending) : 0;
  }

  override async alarm(): Promise<void> {
    this.armed = false;
    await this.write();
  }

  /** `more` merged into `into`, keeping at most MAX_PENDING_NODES distinct nodes. */
  private merge(into: TallyBatch, more: TallyBatch): TallyBatch {
    let room = MAX_PENDING_NODES - Object.keys(into.nodes).length;
    const kept: TallyBatch["nodes"] = {};
    for (const [hash, n] of Object.entries(more.nodes)) {
      if (hash in into.nodes) kept[hash] = n;
      else if (room > 0) {
        kept[hash] = n;
        room--;
      } else this.dropped += n.hits;
    }
    return mergeTally(into, { ...more, nodes: kept });
  }

  /**
   * Writes what is pending, in pages. The pending counts are taken out of memory before D1 is awaited (an
   * `add` may run meanwhile); a page that fails is merged back with what is left and written on a later alarm.
   */
  private async write(): Promise<void> {
    const pending = this.pending;
    this.pending = null;
    if (this.dropped > 0) {
      logEvent("warn", "tally_nodes_dropped", { tree: pending?.treeId ?? null, hits: this.dropped, max_nodes: MAX_PENDING_NODES });
      this.dropped = 0;
    }
    if (!pending || tallyRows(pending) === 0) return;
    const pages = tallyPages(pending, PAGE_ROWS);
    let written = 0;
    try {
      const db = (await homeShard(this.env, pending.treeId)).db;
      for (; written < pages.length && written < MAX_PAGES_PER_WRITE; written++) await writeTallies(db, [pages[written]]);
    } catch (error) {
      logEvent("error", "tally_write_failed", { tree: pending.treeId, error: String(error) });
      return this.later(pages.slice(written), RETRY_MS);
    }
    if (written < pages.length) await this.later(pages.slice(written), NEXT_PAGE_MS);
  }

  /** Puts unwritten pages back before what arrived meanwhile, and arms the alarm that writes them. */
  private async later(pages: TallyBatch[], inMs: number): Promise<void> {
    if (pages.length === 0) return;
    const back = pages.reduce((into, page) => mergeTally(into, page), emptyTally(pages[0].treeId));
    this.pending = this.pending ? mergeTally(back, this.pending) : back;
    this.armed = true;
    await this.ctx.storage.setAlarm(Date.now() + inMs);
  }
}
