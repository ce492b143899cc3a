import { z } from "zod";
import { canonicalJson } from "../../core/canonical";
import type { KeyScope } from "../../cache/provider";
import type { ImportNode, KeyedLine } from "./line";

import { API_FRAME_KEY } from "../../core/protocol";

export { API_FRAME_KEY };

/** One node of a leaf path, as the export reads it. */
export interface ExportNode {
  role: string;
  /** The stored canonical message JSON. */
  message: string;
  observations: number;
  promptTokens: number;
  completionTokens: number;
  finishReason: string | null;
}

/** The tokens and finish reason of a recorded answer, by its index in the line's conversation. */
export interface AnswerUsage {
  index: number;
  prompt_tokens: number;
  completion_tokens: number;
  finish_reason?: string | null;
}

/**
 * How the trajectory API writes and reads the lines of one provider API's
 * trees: the conversation in that API's own shape (Responses `input`, Gemini
 * `contents`, …), keyed on import by that API's own key function. A provider
 * adds a file with one of these and a row in `FORMATS`; the export and the
 * import route pick it by the tree's (or the line's) `muscle-mem:api`.
 */
export interface TrajectoryFormat {
  /** The frame's `muscle-mem:api` value (`openai-responses`, `gemini`, …); null for chat, the default line shape. */
  readonly api: string | null;
  /**
   * The line's fields beyond `{id, tree_id, namespace, model}`: tools, params,
   * the conversation and `scripted_assistant_idx`. Absent: the chat shape
   * (`messages`) is written.
   */
  exportFields?(frame: Record<string, unknown>, path: readonly ExportNode[]): Record<string, unknown>;
  /** Keys a parsed line exactly as the API's route keys the request; an error (the line is bad) otherwise. */
  keyLine(json: unknown, scope: KeyScope): KeyedLine | { error: string };
  /**
   * One stored node as `GET /api/nodes/:hash` shows it (and the export writes it, when `exportFields` is
   * absent), in this API's shape: an OpenAI or Anthropic message, `{role, items}`, `{role, parts}`, ….
   */
  nodeMessage(json: string): Record<string, unknown>;
  /** A path's stored nodes as the list a client sends (`GET /api/nodes/:hash/path`): what the export writes. Absent: one message per node. */
  pathMessages?(jsons: readonly string[]): Array<Record<string, unknown>>;
}

/** The API a parsed line names in `params["muscle-mem:api"]`, or null (a chat line). */
export function lineApi(json: unknown): string | null {
  const params = (json as { params?: unknown } | null)?.params;
  if (typeof params !== "object" || params === null) return null;
  const api = (params as Record<string, unknown>)[API_FRAME_KEY];
  return typeof api === "string" ? api : null;
}

/** zod issues as one line's error text. */
export function issuesText(issues: ReadonlyArray<{ path: PropertyKey[]; message: string }>): string {
  return issues.map((i) => `${i.path.map(String).join(".") || "line"}: ${i.message}`).join("; ");
}

/** The line's `answer_usage` applied to the keyed nodes (by node index): recorded tokens and finish reasons come back. */
export function applyUsage(nodes: ImportNode[], usage: readonly AnswerUsage[] | null | undefined, nodeOfIndex: (index: number) => number | undefined): void {
  for (const u of usage ?? []) {
    const i = nodeOfIndex(u.index);
    const node = i === undefined ? undefined : nodes[i];
    if (!node || node.o === 0) continue;
    node.pt = u.prompt_tokens;
    node.ct = u.completion_tokens;
    if (u.finish_reason) node.f = u.finish_reason;
  }
}

/**
 * `scripted_assistant_idx` and `answer_usage` of a path, by conversation index
 * (`indexOf`: a node's first index). `modelRoles`: the node roles of the
 * model's turns (a recorded answer's is always `assistant`).
 */
export function pathAnnotations(
  path: readonly ExportNode[],
  modelRoles: readonly string[],
  indexOf: (node: number) => number,
): { scripted_assistant_idx: number[]; answer_usage: AnswerUsage[] } {
  const scripted: number[] = [];
  const usage: AnswerUsage[] = [];
  path.forEach((node, i) => {
    if (!modelRoles.includes(node.role)) return;
    if (node.observations === 0 || i === 0) scripted.push(indexOf(i));
    else usage.push({ index: indexOf(i), prompt_tokens: node.promptTokens, completion_tokens: node.completionTokens, finish_reason: node.finishReason });
  });
  return { scripted_assistant_idx: scripted, answer_usage: usage };
}

const storedObject = z.record(z.string(), z.unknown());

/**
 * A line's items (`messages`, `contents`, `input`) without the keys in `keys` (what an exported answer carried
 * outside its hash: its envelope, its candidate metadata), and those keys taken by item index, to be stored
 * back with `storeBeside`. An error text when one is not an object, or when `check` refuses one (its reason).
 */
export function takeStoredKeys(
  items: readonly unknown[],
  keys: ReadonlySet<string>,
  list: string,
  check?: (key: string, value: Record<string, unknown>) => string | null,
): { items: unknown[]; taken: Map<number, Record<string, unknown>> } | { error: string } {
  const taken = new Map<number, Record<string, unknown>>();
  const out: unknown[] = [];
  for (const [i, item] of items.entries()) {
    const entries = typeof item === "object" && item !== null ? Object.entries(item) : [];
    if (!entries.some(([k]) => keys.has(k))) {
      out.push(item);
      continue;
    }
    const around: Record<string, unknown> = {};
    for (const [k, v] of entries) {
      if (!keys.has(k)) continue;
      const parsed = storedObject.safeParse(v);
      if (!parsed.success) return { error: `${list}[${i}]["${k}"] must be an object` };
      const refused = check?.(k, parsed.data);
      if (refused) return { error: `${list}[${i}]["${k}"] ${refused}` };
      around[k] = parsed.data;
    }
    taken.set(i, around);
    out.push(Object.fromEntries(entries.filter(([k]) => !keys.has(k))));
  }
  return { items: out, taken };
}

/**
 * Stores `around` beside a recorded answer's message, outside its hash, as a recording stores it; false (nothing
 * stored) when `node` is not a recorded answer.
 */
export function storeBeside(node: ImportNode | undefined, around: Record<string, unknown>): boolean {
  if (node?.o !== 1) return false;
  node.m = canonicalJson({ ...(JSON.parse(node.m) as Record<string, unknown>), ...around });
  return true;
}
