import { z } from "zod";
import { RESPONSE_KEY } from "../../core/envelope";
import type { KeyScope } from "../../cache/provider";
import { unfinishedReasoning } from "./canonical";
import { keyResponsesRequest } from "./key";
import { responsesRequest, type CanonicalOutputItem, type ResponsesNode } from "./schema";
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

const RESPONSE_KEYS: ReadonlySet<string> = new Set([RESPONSE_KEY]);

/** The frame's API name of trees recorded through `POST /v1/responses`. */
const API = "openai-responses";

const answerUsage = z.array(
  z.object({
    index: z.number().int().nonnegative(),
    prompt_tokens: z.number().int().nonnegative(),
    completion_tokens: z.number().int().nonnegative(),
    finish_reason: z.string().nullish(),
  }),
);

/**
 * A line of a Responses tree: `{model, tools, params, input,
 * scripted_assistant_idx?, answer_usage?}` with `params["muscle-mem:api"] =
 * "openai-responses"`; `input` is validated by the Responses schema when keyed.
 */
const responsesLine = z.looseObject({
  model: z.string().min(1, "model must be a non-empty string"),
  tools: z.array(z.unknown()).nullable().optional(),
  params: z.record(z.string(), z.unknown()),
  input: z.array(z.unknown()).min(1, "input must contain at least one item"),
  scripted_assistant_idx: z.array(z.number().int().nonnegative()).nullable().optional(),
  answer_usage: answerUsage.nullable().optional(),
});

/** Fields of the request the line carries as its own, never taken from `params`. */
const OWN = [API_FRAME_KEY, "model", "tools", "input"];

/** A canonical text part as an input or output content part. */
function contentOf(
  content: ReadonlyArray<{ type: string; text?: string; refusal?: string }>,
  textType: "input_text" | "output_text",
): Array<Record<string, unknown>> {
  return content.map((p) =>
    p.type === "refusal"
      ? { type: "refusal", refusal: p.refusal }
      : textType === "output_text"
        ? { type: textType, text: p.text, annotations: [] }
        : { type: textType, text: p.text },
  );
}

function outputItemOf(item: CanonicalOutputItem): Record<string, unknown> {
  if (item.type === "function_call" || item.type === "custom_tool_call" || item.type === "reasoning") return { ...item }; // a reasoning item is sent back as it came
  const { type: _type, content, ...extra } = item;
  return { type: "message", role: "assistant", content: contentOf(content, "output_text"), ...extra };
}

/**
 * One stored node as the `input` items a client sends for it (call ids stay ordinals: `call_0`, …); a recorded
 * answer's first item carries what the response had around its output under RESPONSE_KEY
 * (src/providers/responses/envelope.ts), which an import stores back.
 */
export function inputItemsOf(node: ResponsesNode & { [RESPONSE_KEY]?: unknown }): Array<Record<string, unknown>> {
  if (node.role === "assistant") {
    const items = node.items.map(outputItemOf);
    const around = node[RESPONSE_KEY];
    if (around !== undefined && items.length > 0) items[0] = { ...items[0], [RESPONSE_KEY]: around };
    return items;
  }
  if (node.role === "tool") {
    const { role: _role, call_id, output, custom, ...extra } = node;
    const type = custom === true ? "custom_tool_call_output" : "function_call_output";
    return [{ type, call_id, output: typeof output === "string" ? output : output.map((text) => ({ type: "input_text", text })), ...extra }];
  }
  if (node.role === "tools") {
    const { role: _role, ...rest } = node;
    return [{ type: "additional_tools", ...rest }];
  }
  const { role, content, ...extra } = node;
  return [{ type: "message", role, content: contentOf(content, "input_text"), ...extra }];
}

function exportFields(frame: Record<string, unknown>, path: readonly ExportNode[]): Record<string, unknown> {
  const { tools, params } = splitFrame(frame);
  const input: Array<Record<string, unknown>> = [];
  const firstItem: number[] = [];
  for (const node of path) {
    firstItem.push(input.length);
    input.push(...inputItemsOf(JSON.parse(node.message) as ResponsesNode));
  }
  return { tools, ...(params ? { params } : {}), input, ...pathAnnotations(path, ["assistant"], (i) => firstItem[i]) };
}

/**
 * Keys a Responses line exactly as `POST /v1/responses` keys `{...params,
 * model, tools, input}` (keyResponsesRequest): every prefix of the path is a
 * request the route keys the same way. Indices in `scripted_assistant_idx`
 * and `answer_usage` are `input` item indices; any item of a run of
 * assistant items (one node) names its node.
 */
function keyLine(json: unknown, scope: KeyScope): KeyedLine | { error: string } {
  const line = responsesLine.safeParse(json);
  if (!line.success) return { error: issuesText(line.error.issues) };
  const { model, tools, params } = line.data;
  const split = takeStoredKeys(line.data.input, RESPONSE_KEYS, "input");
  if ("error" in split) return split;
  const { items: input, taken } = split;
  const body: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(params)) if (!OWN.includes(k)) body[k] = v;
  const request = responsesRequest.safeParse({ ...body, model, input, ...(tools ? { tools } : {}) });
  if (!request.success) return { error: issuesText(request.error.issues) };
  const keyed = keyResponsesRequest(request.data, scope);
  if (!keyed.ok)
    return { error: "invalid" in keyed ? `${keyed.invalid.param}: ${keyed.invalid.message}` : `the request would bypass the cache (${keyed.bypass})` };
  // An assistant node stands for its run of items; every other node for one item.
  const nodeOfItem: number[] = [];
  keyed.key.path.forEach((step, i) => {
    const items = step.role === "assistant" ? (JSON.parse(step.json) as { items: unknown[] }).items.length : 1;
    for (let n = 0; n < items; n++) nodeOfItem.push(i);
  });
  const scripted = (line.data.scripted_assistant_idx ?? []).map((idx) => nodeOfItem[idx]).filter((i) => i !== undefined);
  const { nodes, answers } = importNodesOf(keyed.key.path, scripted, () => "completed");
  // A reasoning item is served with the status it is stored with: an answer that says it did not finish is never one (src/providers/responses/canonical.ts).
  const unfinished = nodes.findIndex((node) => node.o === 1 && (JSON.parse(node.m) as { items?: unknown[] }).items?.some(unfinishedReasoning));
  if (unfinished >= 0) return { error: `node ${unfinished}: a recorded answer's reasoning item says it did not finish (status other than completed)` };
  applyUsage(nodes, line.data.answer_usage, (idx) => nodeOfItem[idx]);
  for (const [idx, around] of taken) {
    // Stored as a recording stores it: beside the answer's items, outside the hash (src/providers/responses/key.ts).
    if (!storeBeside(nodes[nodeOfItem[idx] ?? -1], around)) return { error: `input[${idx}]["${RESPONSE_KEY}"]: only a recorded answer carries it` };
  }
  return { treeId: keyed.key.treeId, frameJson: keyed.key.frameJson, model, nodes, answers };
}

/** A node as the node API shows it: its role and the `input` items it stands for. */
function nodeMessage(json: string): Record<string, unknown> {
  const node = JSON.parse(json) as ResponsesNode;
  return { role: node.role, items: inputItemsOf(node) };
}

/** Lines of trees recorded through `POST /v1/responses`. */
export const responsesTrajectory: TrajectoryFormat = {
  api: API,
  exportFields,
  keyLine,
  nodeMessage,
  pathMessages: (jsons) => jsons.flatMap((json) => inputItemsOf(JSON.parse(json) as ResponsesNode)),
};
