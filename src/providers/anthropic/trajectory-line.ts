import { z } from "zod";
import { ANTHROPIC_ENVELOPE_KEYS, DELTA_KEY, setsUnrecordable } from "./envelope";
import { API_FRAME_KEY } from "../../core/protocol";
import { FRAME_HEADERS } from "./frame";
import { keyMessagesRequest } from "./key";
import { messagesRequest } from "./schema";
import { storeBeside, takeStoredKeys } from "../trajectory/formats";
import { importNodesOf, type KeyedLine } from "../trajectory/line";

/**
 * A JSONL line exported from a tree recorded through `/v1/messages`: the
 * export's shape, with `params["muscle-mem:api"] = "anthropic"` and the
 * messages in Anthropic's format (validated by the Messages schema when keyed).
 */
export const anthropicTrajectoryLine = z.looseObject({
  model: z.string().min(1, "model must be a non-empty string"),
  tools: z
    .array(z.looseObject({ name: z.string() }))
    .nullable()
    .optional(),
  params: z.record(z.string(), z.unknown()),
  messages: z.array(z.unknown()).min(1, "messages must contain at least one message"),
  scripted_assistant_idx: z.array(z.number().int().nonnegative()).nullable().optional(),
});

export type AnthropicTrajectoryLine = z.infer<typeof anthropicTrajectoryLine>;

/** Whether a parsed JSON line says it came from an Anthropic Messages tree. */
export function isAnthropicLine(json: unknown): boolean {
  const params = (json as { params?: unknown } | null)?.params;
  return typeof params === "object" && params !== null && (params as Record<string, unknown>)[API_FRAME_KEY] === "anthropic";
}

/** The stored finish reason an imported answer gets: what the Messages API would have said (stop sequences are not exported). */
function stopOf(json: string): string {
  const content = (JSON.parse(json) as { content?: unknown }).content;
  return Array.isArray(content) && content.some((b) => (b as { type?: unknown }).type === "tool_use") ? "tool_use" : "end_turn";
}

/** A container or context edits upstream keep a live answer from being recorded (they name state in the recording's account): an import keeps none either. */
function unrecordable(key: string, value: Record<string, unknown>): string | null {
  return setsUnrecordable(value) || (key === DELTA_KEY && setsUnrecordable(value.delta))
    ? "sets a container or context_management: an answer with either is never recorded"
    : null;
}

/**
 * Keys an Anthropic line exactly as `/v1/messages` keys `{...params, model,
 * tools, messages[:i]}` (frame headers such as `anthropic-beta` come back
 * from `params`): the same tree id and path hashes, so that an export of one
 * deployment seeds another.
 */
export function keyAnthropicLine(line: AnthropicTrajectoryLine, tenant: string, namespace: string): KeyedLine | { error: string } {
  const params: Record<string, unknown> = { ...line.params };
  delete params[API_FRAME_KEY];
  const headers = new Headers();
  for (const name of FRAME_HEADERS) {
    const value = params[name];
    if (typeof value === "string") headers.set(name, value);
    delete params[name];
  }
  const split = takeStoredKeys(line.messages, ANTHROPIC_ENVELOPE_KEYS, "messages", unrecordable);
  if ("error" in split) return split;
  const parsed = messagesRequest.safeParse({ ...params, model: line.model, messages: split.items, ...(line.tools ? { tools: line.tools } : {}) });
  if (!parsed.success) return { error: parsed.error.issues.map((i) => `${i.path.join(".") || "line"}: ${i.message}`).join("; ") };
  const keyed = keyMessagesRequest(parsed.data, headers, tenant, namespace);
  if (!keyed.ok) return { error: "invalid" in keyed ? keyed.invalid.message : `the request would bypass the cache (${keyed.bypass})` };
  const { nodes, answers } = importNodesOf(keyed.key.path, line.scripted_assistant_idx, (step) => stopOf(step.json));
  for (const [i, around] of split.taken) {
    // Stored as a recording stores it: beside the answer's content, outside the hash (src/providers/anthropic/record.ts).
    if (!storeBeside(nodes[i], around)) return { error: `messages[${i}]: only a recorded answer carries ${[...ANTHROPIC_ENVELOPE_KEYS].join(" or ")}` };
  }
  return { treeId: keyed.key.treeId, frameJson: keyed.key.frameJson, model: line.model, nodes, answers };
}
