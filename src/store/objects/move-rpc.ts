import { finishMove, switchTree, TreeHome, type MoveResult, type SwitchResult } from "../shards/move";
import { treeLearnerOf } from "./tree-objects";

/**
 * The move RPCs of a tree's objects (TreeWriter.move, TreeLearner.relocate).
 * The writer holds its queue of writes (records, prunes, imports) and asks
 * the tree's learner to copy the tree and switch the directory inside the
 * learner's queue (template learning writes too): while the copy runs,
 * nothing else writes the tree. At the switch both objects take the target
 * as the tree's home and release their queues; the writer then deletes the
 * source's rows (src/store/shards/move.ts `finishMove`) while recordings go on in
 * the target. A second move while one runs (drain included) is refused at once (409).
 */
export class TreeMover {
  private moving = false;

  constructor(
    private readonly env: Env,
    private readonly home: TreeHome,
    private readonly serialised: <T>(work: () => Promise<T>) => Promise<T>,
  ) {}

  /** On the tree's writer: moves the tree to shard `to`, the copy serialised with its writes and its learner's. */
  async move(treeId: string, to: string): Promise<MoveResult> {
    if (this.moving) return { ok: false, status: 409, message: `Tree ${treeId} is being moved.` };
    this.moving = true;
    try {
      const switched = await this.serialised(async () => {
        let result: SwitchResult | null = null;
        try {
          // SAFETY: RPC types the result as a stub; SwitchResult is plain data (names and counts), the cast only unwraps that type.
          result = (await treeLearnerOf(this.env, treeId).relocate(treeId, to)) as SwitchResult;
          return result;
        } finally {
          if (result?.ok) this.home.movedTo(treeId, result.to);
          else this.home.forget();
        }
      });
      if (!switched.ok) return switched;
      try {
        return { ...switched, deleted: await finishMove(this.env, treeId, switched.from) };
      } catch (error) {
        // The drain stopped: the next write reads the directory again and finishes it (move.ts `settle`).
        this.home.forget();
        throw error;
      }
    } finally {
      this.moving = false;
    }
  }
}

/** On the tree's learner (TreeLearner.relocate): copies and switches inside the learner's queue, then writes the target. */
export function relocateTree(
  env: Env,
  home: TreeHome,
  serialised: <T>(work: () => Promise<T>) => Promise<T>,
  treeId: string,
  to: string,
): Promise<SwitchResult> {
  return serialised(async () => {
    let result: SwitchResult | null = null;
    try {
      result = await switchTree(env, treeId, to);
      return result;
    } finally {
      if (result?.ok) home.movedTo(treeId, result.to);
      else home.forget();
    }
  });
}

export { TreeHome };
