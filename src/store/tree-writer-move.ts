import { moveTree, TreeHome, type MoveResult } from "./move";
import { treeLearnerOf } from "./tree-objects";

/**
 * The move RPCs of a tree's objects (TreeWriter.move, TreeLearner.relocate).
 * The writer holds its queue of writes (records, prunes, imports) and asks
 * the tree's learner to run the move inside the learner's queue (template
 * learning writes too): while a move runs, nothing else writes the tree.
 * Both objects read the directory again afterwards. A second move while one
 * runs is refused at once (409).
 */
export class TreeMover {
  private moving = false;

  constructor(
    private readonly env: Env,
    private readonly home: TreeHome,
    private readonly serialised: <T>(work: () => Promise<T>) => Promise<T>,
  ) {}

  /** On the tree's writer: moves the tree to shard `to`, serialised with its writes and its learner's. */
  async move(treeId: string, to: string): Promise<MoveResult> {
    if (this.moving) return { ok: false, status: 409, message: `Tree ${treeId} is being moved.` };
    this.moving = true;
    try {
      return await this.serialised(async () => {
        try {
          // SAFETY: RPC types the result as a stub; MoveResult is plain data (names and counts), the cast only unwraps that type.
          return (await treeLearnerOf(this.env, treeId).relocate(treeId, to)) as MoveResult;
        } finally {
          this.home.forget();
        }
      });
    } finally {
      this.moving = false;
    }
  }
}

/** On the tree's learner (TreeLearner.relocate): runs the move inside the learner's queue, then reads the directory again. */
export function relocateTree(
  env: Env,
  home: TreeHome,
  serialised: <T>(work: () => Promise<T>) => Promise<T>,
  treeId: string,
  to: string,
): Promise<MoveResult> {
  return serialised(async () => {
    try {
      return await moveTree(env, treeId, to);
    } finally {
      home.forget();
    }
  });
}

export { TreeHome };
