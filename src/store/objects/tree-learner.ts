import { DurableObject } from "cloudflare:workers";
import { SerialQueue } from "./serial-queue";
import { logEvent } from "../../observability/log-event";
import { loggedStoreWork, meteredEnv } from "../../observability/store-meter";
import { configOf, type Config } from "../../config";
import type { SwitchResult } from "../shards/move";
import type { RecordInput } from "../tree/record";
import { learnBatch } from "../templates/learn-batch";
import { relocateTree, TreeHome } from "./move-rpc";

/** How long a queued recording waits for others before the alarm learns them (docs/templates.md, "When learning happens"). */
export const LEARN_DELAY_MS = 100;
/** Recordings one object holds for its alarm; beyond them the oldest is dropped (and logged): learning is an optimisation. */
export const MAX_QUEUED = 256;

/**
 * What this object has learned since it started, for the isolates that queue recordings: `epoch` names the
 * object's run (a new one after an eviction), `induced` counts the templates its learning induced in it.
 * An isolate that sees either change forgets that the tree had no templates (src/engine/template-hook.ts).
 */
export interface LearnedSoFar {
  epoch: string;
  induced: number;
}

/**
 * One Durable Object per tree (TREE_LEARNER, `idFromName(treeId)`, placed
 * like the tree's writer): it learns the tree's templates from recorded
 * answers (docs/templates.md), one at a time, so that induction never races
 * itself and the writer's joins and records never queue behind it. It holds
 * no single flight. A move of the tree (TreeWriter.move) runs inside this
 * object's queue too (`relocate`), since learning writes the tree.
 *
 * A recorded miss only queues its recording here (`learnSoon`, no D1 work);
 * the object's alarm, LEARN_DELAY_MS after the first queued one, learns the
 * whole batch in the order recorded, in passes of up to 16 recordings: one D1
 * call of reads and one of writes per pass, the same rows as learning them one
 * after another (src/store/templates/learn-batch.ts). The queue lives in memory, and
 * nothing holds the object there meanwhile (no timer, unlike HitTally's 60 s:
 * an idle object is evicted after seconds, not 100 ms, and a held one bills
 * duration); an object evicted before its alarm (a deploy) loses at most the
 * learning queued in it: a template learned later, never a wrong answer. Per
 * batch: one storage write (`setAlarm`) and one alarm invocation (billed as a
 * request).
 */
export class TreeLearner extends DurableObject<Env> {
  /** The object's config, parsed once when it starts. */
  private readonly config: Config = configOf(this.env);
  private readonly queue = new SerialQueue();
  /** The tree's shard by the directory, read again after a move (metered bindings: `learn` reports its D1 work). */
  private readonly home = new TreeHome(meteredEnv(this.env));
  /** Recordings waiting for the alarm, oldest first. */
  private pending: RecordInput[] = [];
  private armed = false;
  /** How long the first queued recording waits for the alarm (a test sets it long, then runs the alarm itself). */
  protected delayMs = LEARN_DELAY_MS;
  private readonly soFar: LearnedSoFar = { epoch: crypto.randomUUID(), induced: 0 };
  /** The last time a recording's learning was stamped with: each later one a later time (the order of partners). */
  private lastStamp = 0;

  /**
   * Queues a recorded answer for the alarm's batch (no D1 work on the caller's path) and says what this
   * object learned so far (LearnedSoFar). Never throws.
   */
  async learnSoon(input: RecordInput): Promise<LearnedSoFar> {
    // Logged (debug) like every call, with no D1 work: the bench counts it as the object request it is.
    return loggedStoreWork(this.config.logLevel, "learner", "learn_soon", () => this.enqueue(input));
  }

  private async enqueue(input: RecordInput): Promise<LearnedSoFar> {
    if (this.pending.length >= MAX_QUEUED) {
      const dropped = this.pending.shift();
      logEvent("warn", "template_learn_dropped", { tree: dropped?.treeId ?? null, max_queued: MAX_QUEUED });
    }
    this.pending.push(input);
    if (!this.armed) {
      this.armed = true;
      await this.ctx.storage.setAlarm(Date.now() + this.delayMs).catch((error: unknown) => {
        this.armed = false;
        logEvent("error", "template_learn_failed", { tree: input.treeId, error: String(error) });
      });
    }
    return { ...this.soFar };
  }

  /** Learns every queued recording in the order recorded, each pass after all earlier learning of the tree. */
  override async alarm(): Promise<void> {
    this.armed = false;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    await loggedStoreWork(this.config.logLevel, "learner", "learn_batch", async () => {
      // One object per tree: one run of one tree id (a run per tree id all the same, should inputs ever mix).
      for (const run of runsByTree(batch)) await this.learnRun(run);
    });
  }

  /** One tree's recordings learned in passes (learnBatch), each pass in the queue. Never throws: a failure is logged. */
  private async learnRun(run: RecordInput[]): Promise<void> {
    const treeId = run[0].treeId;
    const failed = (input: RecordInput, error: unknown) => logEvent("error", "template_learn_failed", { tree: input.treeId, error: String(error) });
    const stamp = () => (this.lastStamp = Math.max(Date.now(), this.lastStamp + 1));
    const reports = await learnBatch(run, (work) => this.serialised(async () => work(await this.home.db(treeId))), stamp, failed).catch(
      (error: unknown) => (failed(run[0], error), []),
    );
    for (const report of reports) this.soFar.induced += report?.induced ?? 0;
  }

  /** Called by the tree's writer (TreeWriter.move): copies the tree and switches the directory inside this object's queue. */
  async relocate(treeId: string, to: string): Promise<SwitchResult> {
    return relocateTree(this.env, this.home, (work) => this.serialised(work), treeId, to);
  }

  /** Runs `work` after everything queued before it, whatever its outcome. */
  private serialised<T>(work: () => Promise<T>): Promise<T> {
    return this.queue.run(work);
  }
}

/** Consecutive recordings of one tree, in order. */
function runsByTree(batch: readonly RecordInput[]): RecordInput[][] {
  const runs: RecordInput[][] = [];
  for (const input of batch) {
    const last = runs.at(-1);
    if (last && last[0].treeId === input.treeId) last.push(input);
    else runs.push([input]);
  }
  return runs;
}
