import { z } from "zod";
import { answerForm, canonicalJson } from "../../core/canonical";
import { keyRequest } from "../chat/key";
import { chatMessage, type ChatRequest } from "../../core/messages";

/**
 * One JSONL line of a trajectory, in the shape of shared/workloads/*.jsonl:
 * `{id, model, tools, messages, scripted_assistant_idx?, params?}`. Other
 * fields (source, reward, …) are ignored.
 */
export const trajectoryLine = z.looseObject({
  id: z.union([z.string(), z.number()]).optional(),
  model: z.string().min(1, "model must be a non-empty string"),
  tools: z
    .array(z.looseObject({ type: z.string() }))
    .nullable()
    .optional(),
  params: z.record(z.string(), z.unknown()).nullable().optional(),
  messages: z.array(chatMessage).min(1, "messages must contain at least one message"),
  scripted_assistant_idx: z.array(z.number().int().nonnegative()).nullable().optional(),
});

export type TrajectoryLine = z.infer<typeof trajectoryLine>;

/** One node to make sure of, in the compact form the import statement reads. */
export interface ImportNode {
  /** hash */
  h: string;
  /** parent */
  p: string;
  /** depth (1 for the first message) */
  d: number;
  /** role */
  r: string;
  /** canonical message JSON */
  m: string;
  /** observations: 1 for a recorded answer, 0 for a path node */
  o: number;
  /** estimated prompt and completion tokens of an answer (characters / 4) */
  pt: number;
  ct: number;
  /** finish reason of an answer */
  f: string | null;
}

/** A line keyed like the proxy keys its requests: its tree and its nodes. */
export interface KeyedLine {
  treeId: string;
  frameJson: string;
  model: string;
  nodes: ImportNode[];
  answers: number;
}

/** Parameters the export writes as their own fields rather than in `params`. */
const OWN_FIELDS = new Set(["model", "tools", "messages"]);

/**
 * Keys one trajectory exactly as the proxy would key the request
 * `{...params, model, tools, messages[:i]}` for every i: the same frame, the
 * same tree id and the same path hashes. Assistant message i (unless listed in
 * `scripted_assistant_idx`) becomes a recorded answer of messages[:i].
 */
export function keyLine(line: TrajectoryLine, tenant: string, namespace: string): KeyedLine | { error: string } {
  const params: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(line.params ?? {})) if (!OWN_FIELDS.has(k)) params[k] = v;
  const body = { ...params, model: line.model, messages: line.messages, ...(line.tools ? { tools: line.tools } : {}) } as ChatRequest;
  const keyed = keyRequest(body, tenant, namespace);
  if (!keyed.ok) return { error: "invalid" in keyed ? keyed.invalid.message : `the request would bypass the cache (${keyed.bypass})` };
  const { nodes, answers } = importNodesOf(
    // An assistant message is stored as the model sent it (content "", refusal: null, …), like a recorded answer.
    keyed.key.path.map((step, i) => ({
      hash: step.hash,
      parent: step.parent,
      role: step.message.role,
      json: step.message.role === "assistant" ? canonicalJson(answerForm(step.message, line.messages[i])) : step.json,
      toolCalls: (step.message.tool_calls?.length ?? 0) > 0,
    })),
    line.scripted_assistant_idx,
    (step) =>
      step.toolCalls
        ? "tool_calls"
        : step.json.includes('"function_call"') && (JSON.parse(step.json) as { function_call?: unknown }).function_call
          ? "function_call"
          : "stop",
  );
  return { treeId: keyed.key.treeId, frameJson: keyed.key.frameJson, model: line.model, nodes, answers };
}

/**
 * The nodes of one keyed line: every path step, and assistant message i
 * (unless listed in `scripted`) as a recorded answer of messages[:i], with
 * token counts estimated from characters and the finish reason `finishOf` gives.
 */
export function importNodesOf<S extends { hash: string; parent: string; role: string; json: string }>(
  path: readonly S[],
  scriptedIdx: readonly number[] | null | undefined,
  finishOf: (step: S) => string,
): { nodes: ImportNode[]; answers: number } {
  const scripted = new Set(scriptedIdx ?? []);
  const nodes: ImportNode[] = [];
  let promptChars = 0;
  let answers = 0;
  path.forEach((step, i) => {
    const answer = i > 0 && step.role === "assistant" && !scripted.has(i);
    if (answer) answers++;
    nodes.push({
      h: step.hash,
      p: step.parent,
      d: i + 1,
      r: step.role,
      m: step.json,
      o: answer ? 1 : 0,
      pt: answer ? Math.ceil(promptChars / 4) : 0,
      ct: answer ? Math.ceil(step.json.length / 4) : 0,
      f: answer ? finishOf(step) : null,
    });
    promptChars += step.json.length;
  });
  return { nodes, answers };
}

/** Splits a frame into the export line's own fields and the remaining `params`. */
export function splitFrame(frame: Record<string, unknown>): { tools: unknown[] | null; params: Record<string, unknown> | null } {
  const params: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(frame)) if (!OWN_FIELDS.has(k)) params[k] = v;
  return { tools: Array.isArray(frame.tools) ? frame.tools : null, params: Object.keys(params).length > 0 ? params : null };
}
