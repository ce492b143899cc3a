import { DurableObject } from "cloudflare:workers";
import type { StoredAnswer } from "../cache/answer";
import { importNodes, type ImportBatch, type ImportOutcome } from "./import";
import { runPrune, type PruneRequest, type PruneResult } from "./prune";
import { choose } from "../cache/policy";
import { configOf } from "../config";
import { readAnswers } from "./answers";
import { recordGeneration, type RecordInput, type RecordOutcome } from "./record";
import type { MoveResult } from "./move";
import { TreeHome, TreeMover } from "./tree-writer-move";
import { SingleFlight, type Claim, type Joined } from "./single-flight";
import { learnFrom, type LearnReport } from "./templates-learn";

/**
 * One Durable Object per tree (tenant, namespace, frame), reached with
 * `idFromName(treeId)`. It serialises the tree's writes to D1 and runs single
 * flight for its misses. Hits never come here.
 */
export class TreeWriter extends DurableObject<Env> {
  private readonly flights = new SingleFlight(Number(this.env.SINGLE_FLIGHT_WAIT_MS) || 120_000);
  private queue: Promise<unknown> = Promise.resolve();
  /** The tree's shard by the directory, and its moves (src/store/tree-writer-move.ts). */
  private readonly home = new TreeHome(this.env);
  private readonly mover = new TreeMover(this.env, this.home, (work) => this.serialised(work));

  /** Asks to generate the answer for path hash `key`, at once: lead, a recent answer, or `waiting` (then `follow`). */
  async join(key: string): Promise<Joined> {
    return this.flights.join(key);
  }

  /** Waits for the leader of `key` (bounded by its lease). */
  async follow(key: string): Promise<Claim> {
    return this.flights.follow(key);
  }

  /**
   * Records a generation (one D1 batch, after every earlier write of this tree)
   * and serves its answer to the waiters of `key` when a claim `token` is given.
   */
  async record(input: RecordInput, key?: string, token?: string): Promise<RecordOutcome> {
    let outcome: RecordOutcome;
    try {
      outcome = await this.serialised(async () => recordGeneration(await this.db(input.treeId, input), input));
    } catch (error) {
      // Nothing was stored: end the flight, so its waiters and the next request go to the model.
      if (key && token) this.flights.fail(key, token);
      throw error;
    }
    if (key) {
      const answers = await readAnswers(await this.db(input.treeId), key).catch(() => []);
      const chosen = choose(answers, configOf(this.env).policy);
      this.flights.complete(key, token, this.answerOf(input), chosen === null ? null : answers[chosen]);
    }
    return outcome;
  }

  /** The leader could not produce a recordable answer. */
  async release(key: string, token: string): Promise<void> {
    this.flights.fail(key, token);
  }

  /**
   * Prunes a subtree or the stale paths of this tree, serialised with its
   * writes, and forgets the recent answers single flight would still serve.
   */
  async prune(request: PruneRequest): Promise<PruneResult> {
    try {
      return await this.serialised(async () => runPrune(await this.db(request.treeId), request));
    } finally {
      this.flights.forget();
    }
  }

  /** Seeds this tree from imported trajectories (idempotent), serialised with its writes. */
  async importPaths(batch: ImportBatch): Promise<ImportOutcome> {
    return this.serialised(async () => importNodes(await this.db(batch.treeId, batch), batch));
  }

  /**
   * Learns templates from a recorded answer (docs/templates.md). The chat
   * route calls it on the tree's learner object (`idFromName("learn\0" + treeId)`),
   * so learning is serialised per tree without holding up the writer's joins
   * and records. Never throws: learning is an optimisation.
   */
  async learn(input: RecordInput): Promise<LearnReport | null> {
    return this.serialised(async () => learnFrom(await this.db(input.treeId), input)).catch((error) => {
      console.error(JSON.stringify({ event: "template_learn_failed", tree: input.treeId, error: String(error) }));
      return null;
    });
  }

  /** Moves this tree to shard `to` (POST /api/trees/:id/move), serialised with every write of the tree. */
  async move(treeId: string, to: string): Promise<MoveResult> {
    return this.mover.move(treeId, to);
  }

  /** On the tree's learner, called by its writer's move: runs the move inside the learner's queue. */
  async relocate(treeId: string, to: string): Promise<MoveResult> {
    return this.mover.relocate(treeId, to);
  }

  /** The shard that holds `treeId` by the directory (src/store/move.ts TreeHome); `identity` places a new tree. */
  private db(treeId: string, identity: { tenant: string; namespace: string } | null = null): Promise<D1Database> {
    return this.home.db(treeId, identity);
  }

  /** Runs `work` after every write queued before it, whatever their outcome. */
  private serialised<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private answerOf(input: RecordInput): StoredAnswer {
    const a = input.answer;
    return {
      hash: a.hash,
      message: JSON.parse(a.json),
      observations: 1,
      finishReason: a.finishReason,
      promptTokens: a.promptTokens,
      completionTokens: a.completionTokens,
      latencyMs: a.latencyMs,
    };
  }
}
