import { DurableObject } from "cloudflare:workers";
import { SerialQueue } from "./serial-queue";
import type { StoredAnswer } from "../../core/answer";
import { importNodes, type ImportBatch, type ImportOutcome } from "./seed";
import { runPrune, type PruneRequest, type PruneResult } from "../prune/prune";
import { PruneAlarm } from "../prune/alarm";
import { queuedAccess } from "../prune/pages";
import { choose } from "../../cache/policy";
import { configOf, type Config } from "../../config";
import { readAnswers } from "../tree/answers";
import { lookUpOrJoin, type LookedUp, type LookupOrJoinRequest } from "./lookup-or-join";
import { recordGeneration, recordGenerations, type RecordInput, type RecordOutcome, type Recorded } from "../tree/record";
import type { MoveResult } from "../shards/move";
import { TreeHome, TreeMover } from "./move-rpc";
import { SingleFlight, type Claim, type Joined } from "./single-flight";
import { RecentWrites } from "./recent-writes";
import { loggedStoreWork, meteredEnv } from "../../observability/store-meter";

/** A recording waiting for the writer, and how to hand back its outcome. */
interface QueuedRecording {
  input: RecordInput;
  key?: string;
  done: (outcome: Promise<Recorded>) => void;
}

/**
 * One Durable Object per tree (tenant, namespace, frame), reached with
 * `idFromName(treeId)`, placed next to its shard's primary (D1_SHARD_LOCATIONS).
 * It serialises the tree's writes to D1 and runs single flight for its misses.
 * A cold lookup that found nothing to serve in D1 joins here in the same call,
 * reading the primary again unless the Worker's read was of it and nothing was
 * recorded at that key since; hits, warm or cold, never come here. Template
 * learning runs in the tree's own TreeLearner (src/store/objects/tree-learner.ts).
 */
export class TreeWriter extends DurableObject<Env> {
  /** The object's config, parsed once when it starts (first: the fields below read it). */
  private readonly config: Config = configOf(this.env);
  private readonly flights = new SingleFlight(this.config.singleFlightWaitMs);
  private readonly queue = new SerialQueue();
  /** What this object wrote lately, by answer key: whether a cold lookup may trust the Worker's read of the primary (lookupOrJoin). */
  private readonly writes = new RecentWrites(Math.max(10_000, 3 * this.config.lookupTimeoutMs));
  /** Recordings waiting for the writer: whatever queued while it wrote goes to D1 in one batch (with the read of each `key`'s answers). */
  private pending: QueuedRecording[] = [];
  /** The tree's shard by the directory (metered bindings: a lookup reports its D1 work), and its moves (src/store/objects/move-rpc.ts). */
  private readonly home = new TreeHome(meteredEnv(this.env));
  private readonly mover = new TreeMover(this.env, this.home, (work) => this.serialised(work));
  /** The tree's stale prune on this object's alarm (src/store/prune/alarm.ts). */
  private readonly pruneAlarm = new PruneAlarm(this.ctx.storage, this.config, (request) => this.prune(request));

  /**
   * A cold exact lookup the Worker's own D1 read could not serve, in one call:
   * the answers at h_n from D1 and the serving policy; on a miss, the single-flight join (src/store/objects/lookup-or-join.ts).
   * When the Worker read this tree's primary and nothing written here since could
   * change the answers at h_n (`writes`), the answers are not read again.
   * Not queued behind writes: a request that reads D1 just before a leader's
   * record lands still finds its flight, or the answer it left for `recentMs`.
   */
  async lookupOrJoin(request: LookupOrJoinRequest): Promise<LookedUp> {
    // The tree's shard resolved once for the call (a tree with no directory row yet is looked up each time).
    let resolved: Promise<string> | undefined;
    const home = () => (resolved ??= this.home.name(request.treeId));
    return lookUpOrJoin(async () => this.home.dbNamed(await home()), this.flights, request, Date.now, {
      home,
      quiet: (key, withinMs) => this.writes.quiet(key, withinMs),
    });
  }

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
    // After the response: its D1 work shows only in a debug `store_work` line (bench/recording-cost.ts).
    return loggedStoreWork(this.config.logLevel, "writer", "record", () => this.recordNow(input, key, token));
  }

  private async recordNow(input: RecordInput, key?: string, token?: string): Promise<RecordOutcome> {
    let recorded: Recorded;
    try {
      recorded = await this.queueRecord(input, key);
    } catch (error) {
      // Nothing was stored: end the flight, so its waiters and the next request go to the model.
      if (key && token) this.flights.fail(key, token);
      throw error;
    }
    if (key) {
      // The answers at `key` as the recording's own batch left them (read in it: no D1 call of its own).
      const answers = recorded.answers ?? (await readAnswers(await this.db(input.treeId), key).catch(() => []));
      const chosen = choose(answers, this.config.policy);
      this.flights.complete(key, token, this.answerOf(input), chosen === null ? null : answers[chosen]);
    }
    await this.pruneAlarm.arm(input.treeId);
    return { nodesInserted: recorded.nodesInserted, answerIsNew: recorded.answerIsNew };
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
      // Each page of the prune is its own queued write, so recordings run between pages (src/store/prune/pages.ts).
      return await runPrune(
        queuedAccess(
          () => this.db(request.treeId),
          (work) => this.serialised(work),
        ),
        request,
      );
    } finally {
      this.flights.forget();
    }
  }

  /**
   * Seeds this tree from imported trajectories (idempotent), serialised with its writes, and forgets the
   * recent answers single flight would still serve: an imported answer can make a node disagree (before
   * 11-28 the answer recorded there just before was still served for `recentMs`, although D1 served neither).
   */
  async importPaths(batch: ImportBatch): Promise<ImportOutcome> {
    try {
      const outcome = await this.serialised(async () => importNodes(await this.db(batch.treeId, batch), batch));
      await this.pruneAlarm.arm(batch.treeId);
      return outcome;
    } finally {
      this.flights.forget();
    }
  }

  /** Arms the tree's stale-prune alarm if none is set, its first run within `within` ms (the cron's sweep, src/store/prune/sweep.ts). */
  async armPrune(treeId: string, within: number): Promise<boolean> {
    return this.pruneAlarm.arm(treeId, within);
  }

  /** The tree's stale prune (src/store/prune/alarm.ts), then the next alarm. */
  override async alarm(): Promise<void> {
    await this.pruneAlarm.fire();
  }

  /** Moves this tree to shard `to` (POST /api/trees/:id/move): its copy serialised with every write of the tree (src/store/objects/move-rpc.ts). */
  async move(treeId: string, to: string): Promise<MoveResult> {
    return this.mover.move(treeId, to);
  }

  /** The shard that holds `treeId` by the directory (src/store/shards/move.ts TreeHome); `identity` places a new tree. */
  private db(treeId: string, identity: { tenant: string; namespace: string } | null = null): Promise<D1Database> {
    return this.home.db(treeId, identity);
  }

  /** Queues a recording; the first of a group schedules the write of everything queued by the time its turn comes. */
  private queueRecord(input: RecordInput, key?: string): Promise<Recorded> {
    return new Promise<Recorded>((resolve, reject) => {
      this.pending.push({ input, key, done: (outcome) => void outcome.then(resolve, reject) });
      if (this.pending.length === 1) void this.queue.run(() => this.writePending());
    });
  }

  /**
   * Writes the queued recordings in one D1 batch. When the batch fails (one
   * bad recording makes it all fail), each is written alone, so that one
   * recording's fault never costs the others theirs.
   */
  private async writePending(): Promise<void> {
    const group = this.pending.splice(0);
    if (group.length === 0) return;
    // A recording adds an observation at its answer's parent alone (path nodes are stored unobserved): marked there.
    await this.writes.during(
      group.map((g) => g.input.answer.parent),
      () => this.writeGroup(group),
    );
  }

  private async writeGroup(group: QueuedRecording[]): Promise<void> {
    const first = group[0].input;
    if (group.length > 1 && group.every((g) => g.input.treeId === first.treeId)) {
      try {
        const outcomes = await recordGenerations(
          await this.db(first.treeId, first),
          group.map((g) => g.input),
          Date.now(),
          group.map((g) => g.key),
        );
        group.forEach((g, i) => g.done(Promise.resolve(outcomes[i])));
        return;
      } catch {
        // Fall through: alone, each recording succeeds or fails on its own.
      }
    }
    for (const g of group) {
      const outcome = this.db(g.input.treeId, g.input).then((db) => recordGeneration(db, g.input, Date.now(), g.key));
      g.done(outcome);
      await outcome.catch(() => undefined);
    }
  }

  /** Runs `work` (a prune page, an import, a move: any key may change) after every write queued before it, whatever their outcome. */
  private serialised<T>(work: () => Promise<T>): Promise<T> {
    return this.queue.run(() => this.writes.during("tree", work));
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
