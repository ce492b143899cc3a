import type { TreeWriter } from "./tree-writer";

/**
 * The tree's Durable Objects by name: its writer (single flight and
 * serialised writes, `idFromName(treeId)`) and its learner (template
 * learning, a TreeWriter of its own so that joins and records never queue
 * behind induction).
 */
export function treeWriterOf(env: Env, treeId: string): DurableObjectStub<TreeWriter> {
  return env.TREE_WRITER.get(env.TREE_WRITER.idFromName(treeId));
}

/** The object that learns templates for a tree, apart from the tree's writer. */
export function treeLearnerOf(env: Env, treeId: string): DurableObjectStub<TreeWriter> {
  return env.TREE_WRITER.get(env.TREE_WRITER.idFromName(`learn\u0000${treeId}`));
}
