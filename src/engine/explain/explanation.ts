import { frameApi } from "../../core/protocol";
import type { Divergence, FrameDivergence, MissExplanation, MissKind } from "../../core/explanation";
import { asText, countDifferences, firstDifference, fieldPath, segmentsOf, shortDiff, type Json } from "./compare";
import type { FieldNames } from "./request-paths";

export type { Divergence, FrameDivergence, MissExplanation, MissKind };

/**
 * Why a miss missed, built from what the store holds for the request's own
 * tree (and, for a new tree, the same tenant's and namespace's other trees of the request's API).
 * Pure: the facts come from one D1 query after the response (src/store/tree/divergence.ts).
 */

/** A recorded node as the divergence query reads it. */
export interface RecordedNode {
  hash: string;
  role: string;
  /** The node's message, canonical JSON. */
  json: string;
  observations: number;
}

/** A step of the request's path: its hash, role and canonical message JSON. */
export interface PathMessage {
  hash: string;
  role: string;
  json: string;
}

/** What the divergence query found for one miss. */
export interface DivergenceFacts {
  treeId: string;
  treeExists: boolean;
  path: readonly PathMessage[];
  /** How many of the path's nodes were recorded before the request. */
  depth: number;
  /** The recorded children of the deepest recorded node (the request's own nodes left out). */
  children: readonly RecordedNode[];
  frameJson: string;
  /** The tenant's other trees in the namespace on the request's API, when the tree is new (others are left out: `frameDivergence`). */
  trees: ReadonlyArray<{ id: string; model: string; frame: string }>;
  template?: string | null;
  /** The request was not looked up (a fast miss). */
  fast?: boolean;
  /** How many answers the lookup found recorded at the request's last message (else counted from `children`). */
  answers?: number;
  /** Names a differing field as the request wrote it (./request-paths.ts); default: the canonical message's path. */
  names?: FieldNames;
}

function parsed(json: string): Json {
  try {
    return JSON.parse(json) as Json;
  } catch {
    return json;
  }
}

/** Field names without the request: the canonical message's path, `messages[5].content`, on every API. */
const CANONICAL_NAMES: FieldNames = {
  message: (index, segments) => segments.reduce<string>((path, s) => fieldPath(path, s), `messages[${index}]`),
  frame: (segments) => segments.reduce<string>((path, s) => fieldPath(path, s), ""),
};

/** The recorded child nearest `message`: the same role first, then the fewest differing leaves, then the most observed. */
export function closestChild(message: PathMessage, children: readonly RecordedNode[]): RecordedNode | null {
  const incoming = parsed(message.json);
  let best: { node: RecordedNode; score: number } | null = null;
  for (const node of children) {
    const score = (node.role === message.role ? 0 : 100_000) + countDifferences(incoming, parsed(node.json));
    if (!best || score < best.score || (score === best.score && node.observations > best.node.observations)) best = { node, score };
  }
  return best?.node ?? null;
}

function divergenceAt(facts: DivergenceFacts): Divergence | null {
  const index = facts.depth;
  const message = facts.path[index];
  if (!message) return null;
  const closest = closestChild(message, facts.children);
  const difference = closest && firstDifference(parsed(message.json), parsed(closest.json));
  return {
    index,
    role: message.role,
    node: message.hash,
    parent: index === 0 ? facts.treeId : facts.path[index - 1].hash,
    siblings: facts.children.length,
    closest: closest && { node: closest.hash, role: closest.role, observations: closest.observations },
    field: difference ? (facts.names ?? CANONICAL_NAMES).message(index, segmentsOf(difference.path), parsed(message.json)) : null,
    diff: difference ? shortDiff(asText(difference.incoming), asText(difference.recorded)) : null,
  };
}

/**
 * The frame field that differs from the nearest of the tenant's trees (the fewest differing leaves), among the
 * trees of the request's own API only: another API's frame has other fields (`instructions`, `max_tokens`), so
 * naming one would tell the user to change what their API does not have. No tree of that API: no nearest tree.
 */
export function frameDivergence(frameJson: string, trees: DivergenceFacts["trees"], names: FieldNames = CANONICAL_NAMES): FrameDivergence {
  const frame = parsed(frameJson);
  const api = frameApi(frameJson);
  const same = trees.filter((tree) => frameApi(tree.frame) === api);
  let best: { tree: DivergenceFacts["trees"][number]; score: number } | null = null;
  for (const tree of same) {
    const score = countDifferences(frame, parsed(tree.frame));
    if (!best || score < best.score) best = { tree, score };
  }
  const difference = best && firstDifference(frame, parsed(best.tree.frame));
  return {
    nearest_tree: best?.tree.id ?? null,
    nearest_model: best?.tree.model ?? null,
    field: difference ? (difference.path === "" ? "frame" : names.frame(segmentsOf(difference.path))) : null,
    diff: difference ? shortDiff(asText(difference.incoming), asText(difference.recorded)) : null,
    trees_compared: same.length,
  };
}

/** The explanation of a miss from what the store holds. */
export function explainMiss(facts: DivergenceFacts): MissExplanation {
  const base = { tree_id: facts.treeId, messages: facts.path.length, template: facts.template ?? null, fast_miss: facts.fast ?? false, answers: null };
  if (!facts.treeExists) return { ...base, kind: "new-tree", depth: 0, divergence: null, frame: frameDivergence(facts.frameJson, facts.trees, facts.names) };
  const depth = Math.min(facts.depth, facts.path.length);
  if (depth >= facts.path.length) {
    // The fork is the request's last message: its recorded children are what answers it (the request's own recording left out).
    const answers = facts.answers ?? facts.children.filter((c) => c.role === "assistant" && c.observations > 0).length;
    return { ...base, kind: "unconfirmed", depth, divergence: null, frame: null, answers };
  }
  return { ...base, kind: "new-branch", depth, divergence: divergenceAt({ ...facts, depth }), frame: null };
}

/** The `muscle-mem-miss` header value of an explanation's kind and depth: `new-branch; depth=5`. */
export function missHeaderValue(kind: MissKind, depth: number | null): string {
  return depth === null || kind === "new-tree" || kind === "no-cache" || kind === "unknown" ? kind : `${kind}; depth=${depth}`;
}
