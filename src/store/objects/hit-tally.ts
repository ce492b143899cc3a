import { DurableObject } from "cloudflare:workers";
import { logEvent } from "../../observability/log-event";
import { homeShard } from "../shards/directory";
import { emptyTally, mergeTally, tallyRows, writeTallies, type TallyBatch } from "../tree/tally-batch";

const PENDING = "pending";
/** When a D1 write failed, the next try. */
const RETRY_MS = 10_000;

/**
 * One object per tree (`idFromName(treeId)` in HIT_TALLY) that gathers the
 * hit counts every isolate sends (Counters, once per COUNTER_FLUSH_MS each),
 * keeps them in its own storage, and writes them to the tree's D1 shard in
 * one batch at most once per `flushMs` (TALLY_FLUSH_MS): so D1 writes caused
 * by hits are at most one per node per interval for the whole deployment,
 * whatever the number of isolates. `flushMs` 0 writes at once.
 */
export class HitTally extends DurableObject<Env> {
  /** Adds counts; the first addition after a write sets the alarm that writes them. */
  async add(batch: TallyBatch, flushMs: number): Promise<void> {
    const pending = (await this.ctx.storage.get<TallyBatch>(PENDING)) ?? emptyTally(batch.treeId);
    mergeTally(pending, batch);
    await this.ctx.storage.put(PENDING, pending);
    if (flushMs <= 0) return this.write();
    if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(Date.now() + flushMs);
  }

  /** How many rows wait for the next write (for tests and the dashboard's delay note). */
  async pendingRows(): Promise<number> {
    const pending = await this.ctx.storage.get<TallyBatch>(PENDING);
    return pending ? tallyRows(pending) : 0;
  }

  override async alarm(): Promise<void> {
    await this.write();
  }

  /**
   * Writes what is pending in one D1 batch. The pending counts are taken out
   * of storage before D1 is awaited (an `add` may run meanwhile), and put
   * back with a new alarm when the write fails: nothing is counted twice or lost.
   */
  private async write(): Promise<void> {
    const pending = await this.ctx.storage.get<TallyBatch>(PENDING);
    if (!pending || tallyRows(pending) === 0) return;
    await this.ctx.storage.delete(PENDING);
    try {
      await writeTallies((await homeShard(this.env, pending.treeId)).db, [pending]);
    } catch (error) {
      const now = (await this.ctx.storage.get<TallyBatch>(PENDING)) ?? emptyTally(pending.treeId);
      await this.ctx.storage.put(PENDING, mergeTally(pending, now));
      if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(Date.now() + RETRY_MS);
      logEvent("error", "tally_write_failed", { tree: pending.treeId, error: String(error) });
    }
  }
}
