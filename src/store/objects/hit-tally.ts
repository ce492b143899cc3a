import { DurableObject } from "cloudflare:workers";
import { configOf, type Config } from "../../config";
import { logEvent } from "../../observability/log-event";
import { loggedStoreWork, meteredEnv } from "../../observability/store-meter";
import { homeShard } from "../shards/directory";
import { emptyTally, mergeTally, tallyRows, writeTallies, type TallyBatch } from "../tree/tally-batch";
import { tallyPages } from "../tree/tally-pages";

/** When a D1 write failed, the next try. */
const RETRY_MS = 10_000;
/** How long past its alarm time the object holds itself in memory (an alarm may fire a little late). */
const KEEP_MARGIN_MS = 5_000;
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
 * Its own storage is written once per interval (the alarm), never per add: what is pending lives in memory,
 * held there by a timer until the write (`keepUntil`); lost only if the object is evicted anyway (a deploy:
 * counts, never correctness). Memory is bounded
 * (MAX_PENDING_NODES per tree) and a write goes in pages of PAGE_ROWS updates, MAX_PAGES_PER_WRITE at a time;
 * pages left for later (`carry`) go first, and what arrived meanwhile waits a whole interval after the
 * last page written, so that no node's row is written twice within one interval.
 */
export class HitTally extends DurableObject<Env> {
  private readonly config: Config = configOf(this.env);
  private pending: TallyBatch | null = null;
  /** Pages of an earlier write still to go (beyond MAX_PAGES_PER_WRITE, or a failed write), and when. */
  private carry: TallyBatch[] = [];
  private carryAt = 0;
  /** When `pending` is due: an interval after its first add, and never within an interval of the last page written. */
  private dueAt = 0;
  private lastWriteAt = Number.NEGATIVE_INFINITY;
  private flushMs = 0;
  private alarmAt: number | null = null;
  private dropped = 0;
  private keep: ReturnType<typeof setTimeout> | undefined;
  /** A retry of an alarm the storage refused to set (RETRY_MS). */
  private rearm: ReturnType<typeof setTimeout> | undefined;

  /** Adds counts; the first addition after a write sets the alarm that writes them. */
  async add(batch: TallyBatch, flushMs: number): Promise<void> {
    if (!this.pending) this.dueAt = Date.now() + Math.max(0, flushMs);
    this.pending = this.merge(this.pending ?? emptyTally(batch.treeId), batch);
    this.flushMs = Math.max(0, flushMs);
    if (flushMs <= 0) return this.flush(true);
    await this.arm();
  }

  /** How many rows wait for the next write (for tests and the dashboard's delay note). */
  async pendingRows(): Promise<number> {
    return (this.pending ? tallyRows(this.pending) : 0) + this.carry.reduce((n, page) => n + tallyRows(page), 0);
  }

  override async alarm(): Promise<void> {
    this.alarmAt = null;
    // An alarm with no carried pages was armed for `pending`, at its due time (`arm` moves it when that moves).
    await this.flush(this.carry.length === 0 || Date.now() >= this.due());
  }

  private due(): number {
    return Math.max(this.dueAt, this.lastWriteAt + this.flushMs);
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
   * Writes the carried pages and, when `withPending`, what is pending (merged with them: one update per
   * row), in pages. Everything is taken out of memory before D1 is awaited (an `add` may run meanwhile);
   * pages not written (a failure, or beyond MAX_PAGES_PER_WRITE) are carried to a later alarm.
   */
  private async flush(withPending: boolean): Promise<void> {
    let pages = this.carry;
    this.carry = [];
    if (withPending && this.pending) {
      const all = pages.reduce((into, page) => mergeTally(into, page), this.pending);
      this.pending = null;
      pages = tallyPages(all, PAGE_ROWS);
    }
    if (this.dropped > 0) {
      logEvent("warn", "tally_nodes_dropped", { tree: pages[0]?.treeId ?? null, hits: this.dropped, max_nodes: MAX_PENDING_NODES });
      this.dropped = 0;
    }
    pages = pages.filter((page) => tallyRows(page) > 0);
    if (pages.length > 0) await loggedStoreWork(this.config.logLevel, "tally", "flush", () => this.writePages(pages));
    await this.arm();
  }

  private async writePages(pages: TallyBatch[]): Promise<void> {
    let written = 0;
    try {
      const db = (await homeShard(meteredEnv(this.env), pages[0].treeId)).db;
      for (; written < pages.length && written < MAX_PAGES_PER_WRITE; written++) {
        await writeTallies(db, [pages[written]]);
        this.lastWriteAt = Date.now();
      }
    } catch (error) {
      logEvent("error", "tally_write_failed", { tree: pages[0].treeId, error: String(error) });
      this.carry = pages.slice(written);
      this.carryAt = Date.now() + RETRY_MS;
      return;
    }
    this.carry = pages.slice(written);
    this.carryAt = Date.now() + NEXT_PAGE_MS;
  }

  /**
   * Sets the alarm for what comes next (carried pages, else the pending tally), moving it only when that
   * moved. Never throws: an alarm the storage refuses is logged and set again (the counts stay pending).
   */
  private async arm(): Promise<void> {
    const next = this.carry.length > 0 ? this.carryAt : this.pending ? this.due() : null;
    this.keepUntil(next);
    clearTimeout(this.rearm);
    if (next === null || next === this.alarmAt) return;
    this.alarmAt = next;
    try {
      await this.ctx.storage.setAlarm(next);
    } catch (error) {
      // Not set: forget it, so that the next add sets it again, and try again meanwhile. Before 11-28 the
      // object believed it set, never set one again, and held the tree's counts until it was evicted.
      if (this.alarmAt === next) this.alarmAt = null;
      logEvent("error", "tally_alarm_failed", { error: String(error) });
      this.rearm = setTimeout(() => void this.arm(), RETRY_MS);
    }
  }

  /**
   * Holds the object in memory until its next write while counts are pending: an idle object that could
   * hibernate is evicted with its memory before its alarm (measured under `wrangler dev`: a tree whose hits
   * stopped lost its last interval's counts). A pending timer makes it non-hibernatable: Durable Object
   * duration for up to TALLY_FLUSH_MS per interval (docs/capacity.md), instead of a storage write per add.
   */
  private keepUntil(next: number | null): void {
    clearTimeout(this.keep);
    this.keep = next === null ? undefined : setTimeout(() => undefined, Math.max(0, next - Date.now()) + KEEP_MARGIN_MS);
  }
}
