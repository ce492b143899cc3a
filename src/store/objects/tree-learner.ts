import { DurableObject } from "cloudflare:workers";
import { SerialQueue } from "./serial-queue";
import { logEvent } from "../../observability/log-event";
import { loggedStoreWork, meteredEnv } from "../../observability/store-meter";
import { configOf, type Config } from "../../config";
import type { SwitchResult } from "../shards/move";
import type { RecordInput } from "../tree/record";
import { learnFrom, type LearnReport } from "../templates/learn";
import { relocateTree, TreeHome } from "./move-rpc";

/**
 * One Durable Object per tree (TREE_LEARNER, `idFromName(treeId)`, placed
 * like the tree's writer): it learns the tree's templates from recorded
 * answers (docs/templates.md), one at a time, so that induction never races
 * itself and the writer's joins and records never queue behind it. It holds
 * no single flight. A move of the tree (TreeWriter.move) runs inside this
 * object's queue too (`relocate`), since learning writes the tree.
 */
export class TreeLearner extends DurableObject<Env> {
  /** The object's config, parsed once when it starts. */
  private readonly config: Config = configOf(this.env);
  private readonly queue = new SerialQueue();
  /** The tree's shard by the directory, read again after a move (metered bindings: `learn` reports its D1 work). */
  private readonly home = new TreeHome(meteredEnv(this.env));

  /** Learns templates from a recorded answer, after every earlier learning of this tree. Never throws: learning is an optimisation. */
  async learn(input: RecordInput): Promise<LearnReport | null> {
    const learning = () => this.serialised(async () => learnFrom(await this.home.db(input.treeId), input));
    // After the response: its D1 work shows only in a debug `store_work` line (bench/recording-cost.ts).
    return loggedStoreWork(this.config.logLevel, "learner", "learn", learning).catch((error) => {
      logEvent("error", "template_learn_failed", { tree: input.treeId, error: String(error) });
      return null;
    });
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
