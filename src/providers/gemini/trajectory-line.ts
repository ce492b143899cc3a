import { z } from "zod";
import { keyGeminiRequest } from "./key";
import { CANDIDATE_KEY, generateContentRequest, type CanonicalPart, type GeminiNode } from "./schema";
import type { KeyScope } from "../../cache/provider";
import { importNodesOf, splitFrame, type KeyedLine } from "../trajectory/line";
import {
  API_FRAME_KEY,
  applyUsage,
  issuesText,
  pathAnnotations,
  storeBeside,
  takeStoredKeys,
  type ExportNode,
  type TrajectoryFormat,
} from "../trajectory/formats";

const CANDIDATE_KEYS: ReadonlySet<string> = new Set([CANDIDATE_KEY]);

/** The frame's API name of trees recorded through Gemini's generateContent. */
const API = "gemini";

const answerUsage = z.array(
  z.object({
    index: z.number().int().nonnegative(),
    prompt_tokens: z.number().int().nonnegative(),
    completion_tokens: z.number().int().nonnegative(),
    finish_reason: z.string().nullish(),
  }),
);

/**
 * A line of a Gemini tree: `{model, tools, params, contents,
 * scripted_assistant_idx?, answer_usage?}` with `params["muscle-mem:api"] =
 * "gemini"` and the other body fields (`systemInstruction`,
 * `generationConfig`, `toolConfig`, …) in `params`; validated by the
 * generateContent schema when keyed.
 */
const geminiLine = z.looseObject({
  model: z.string().min(1, "model must be a non-empty string"),
  tools: z.array(z.unknown()).nullable().optional(),
  params: z.record(z.string(), z.unknown()),
  contents: z.array(z.unknown()).min(1, "contents must contain at least one content"),
  scripted_assistant_idx: z.array(z.number().int().nonnegative()).nullable().optional(),
  answer_usage: answerUsage.nullable().optional(),
});

/** Fields of the request the line carries as its own, never taken from `params`. */
const OWN = [API_FRAME_KEY, "model", "tools", "contents"];

/** A stored part as the API writes it: a function call's arguments come back as their value, in the model's key order. */
function partOf(part: CanonicalPart): Record<string, unknown> {
  if (!("functionCall" in part)) return { ...part };
  const { functionCall, ...rest } = part;
  // Stored by canonicalContent: the name, an ordinal id and the arguments as the model wrote them.
  const { argsJson, args, ...call } = functionCall as { name: string; id?: string; args?: unknown; argsJson?: string };
  // Neither: the model sent the call without args, and so does the line.
  const value = argsJson === undefined ? args : (JSON.parse(argsJson) as unknown);
  return { ...rest, functionCall: value === undefined ? call : { ...call, args: value } };
}

/**
 * One stored node as the content a client sends for it (function-call ids stay ordinals: `call_0`, …),
 * with a recorded answer's candidate metadata under CANDIDATE_KEY, which an import stores back.
 */
export function contentOf(node: GeminiNode & { [CANDIDATE_KEY]?: unknown }): Record<string, unknown> & { role: string; parts: Array<Record<string, unknown>> } {
  const metadata = node[CANDIDATE_KEY];
  return { role: node.role, parts: node.parts.map(partOf), ...(metadata === undefined ? {} : { [CANDIDATE_KEY]: metadata }) };
}

/** A stored node (its JSON) as the content a client sends for it. */
const nodeMessage = (json: string) => contentOf(JSON.parse(json) as GeminiNode);

function exportFields(frame: Record<string, unknown>, path: readonly ExportNode[]): Record<string, unknown> {
  const { tools, params } = splitFrame(frame);
  const contents = path.map((node) => nodeMessage(node.message));
  return { tools, ...(params ? { params } : {}), contents, ...pathAnnotations(path, ["assistant", "model"], (i) => i) };
}

/**
 * Keys a Gemini line exactly as `/v1beta/models/{model}:generateContent`
 * keys `{...params, tools, contents}` for `model` (keyGeminiRequest). One
 * content is one node, so indices are `contents` indices.
 */
function keyLine(json: unknown, scope: KeyScope): KeyedLine | { error: string } {
  const line = geminiLine.safeParse(json);
  if (!line.success) return { error: issuesText(line.error.issues) };
  const { model, tools, params } = line.data;
  const split = takeStoredKeys(line.data.contents, CANDIDATE_KEYS, "contents");
  if ("error" in split) return split;
  const { items: contents, taken } = split;
  const body: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(params)) if (!OWN.includes(k)) body[k] = v;
  const request = generateContentRequest.safeParse({ ...body, contents, ...(tools ? { tools } : {}) });
  if (!request.success) return { error: issuesText(request.error.issues) };
  const keyed = keyGeminiRequest(request.data, model, scope);
  if (!keyed.ok)
    return { error: "invalid" in keyed ? `${keyed.invalid.param}: ${keyed.invalid.message}` : `the request would bypass the cache (${keyed.bypass})` };
  // As the route stores them: a recorded answer's role is `assistant`; a model turn the client sent keeps `model`.
  const steps = keyed.key.path.map((step) => ({ ...step, role: step.role === "model" ? "assistant" : step.role }));
  const { nodes, answers } = importNodesOf(steps, line.data.scripted_assistant_idx, () => "STOP");
  nodes.forEach((node, i) => {
    if (node.o === 0) node.r = keyed.key.path[i].role;
  });
  for (const [i, around] of taken) {
    // Stored as a recording stores it: beside the content, outside the hash (src/providers/gemini/key.ts keyGeminiAnswer).
    if (!storeBeside(nodes[i], around)) return { error: `contents[${i}]["${CANDIDATE_KEY}"]: only a recorded answer carries candidate metadata` };
  }
  applyUsage(nodes, line.data.answer_usage, (idx) => idx);
  return { treeId: keyed.key.treeId, frameJson: keyed.key.frameJson, model, nodes, answers };
}

/** Lines of trees recorded through Gemini's generateContent and streamGenerateContent. */
export const geminiTrajectory: TrajectoryFormat = { api: API, exportFields, keyLine, nodeMessage, pathMessages: (jsons) => jsons.map(nodeMessage) };
