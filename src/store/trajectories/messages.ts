import { ANTHROPIC_ENVELOPE_KEYS } from "../../providers/anthropic/envelope";
import type { CanonicalMessage } from "../../core/messages";
import { trajectoryFormatOf } from "../../providers/trajectory/by-api";

/** An OpenAI chat message rebuilt from a stored canonical message. */
export interface OpenAIMessage {
  role: string;
  content: string | null | Array<{ type: "text"; text: string }>;
  name?: string;
  refusal?: string | null;
  tool_calls?: CanonicalMessage["tool_calls"];
  tool_call_id?: string;
  /** Every other field as stored (`function_call`, `prefix`, …): it was keyed, so it must come back. */
  [field: string]: unknown;
}

/** A message of a tree recorded through `/v1/messages`: Anthropic content blocks, as stored. */
export interface AnthropicStoredMessage {
  role: string;
  content: Array<Record<string, unknown>>;
}

/** A node of a tree of another API in that API's own shape: Responses `{role, items}`, Gemini `{role, parts}` (its TrajectoryFormat's `nodeMessage`). */
export type ProviderMessage = Record<string, unknown>;

/** A stored message in its API's format: OpenAI chat, Anthropic Messages for `/v1/messages` trees, or another API's own shape. */
export type TrajectoryMessage = OpenAIMessage | AnthropicStoredMessage | ProviderMessage;

/** Anthropic trees store content as block objects; OpenAI text parts are stored as strings. */
function isAnthropicStored(message: unknown): message is AnthropicStoredMessage {
  const content = (message as { content?: unknown }).content;
  return Array.isArray(content) && content.some((block) => typeof block === "object" && block !== null);
}

/**
 * Turns a stored canonical message back into its API's message: OpenAI chat
 * (tool-call ids stay ordinals, `call_0`, …, which are valid ids and key the
 * same nodes when the list is sent again or imported), or, for a tree
 * recorded through `/v1/messages`, the Anthropic message as stored (ids
 * `toolu_0`, …), with what a recorded answer carried around its content
 * (src/providers/anthropic/envelope.ts), which an import stores back.
 */
export function trajectoryMessageOf(message: CanonicalMessage | AnthropicStoredMessage): TrajectoryMessage {
  if (isAnthropicStored(message)) {
    const around = Object.entries(message).filter(([k]) => ANTHROPIC_ENVELOPE_KEYS.has(k));
    return { role: message.role, content: message.content.map(anthropicBlockOf), ...Object.fromEntries(around) };
  }
  return openAIMessageOf(message);
}

/** An Anthropic block as the API writes it: a tool input recorded as text (`input_json`) comes back as its value, in the model's key order. */
function anthropicBlockOf(block: Record<string, unknown>): Record<string, unknown> {
  if (typeof block.input_json !== "string") return block;
  const { input_json: text, ...rest } = block;
  return { ...rest, input: JSON.parse(text) as unknown };
}

function openAIMessageOf(message: CanonicalMessage): OpenAIMessage {
  const out: OpenAIMessage = { role: message.role, content: null };
  if (typeof message.content === "string") out.content = message.content;
  else if (Array.isArray(message.content)) out.content = message.content.map((text) => ({ type: "text", text }));
  else if (message.role !== "assistant") out.content = "";
  if (message.name !== undefined) out.name = message.name;
  if (message.refusal !== undefined) out.refusal = message.refusal;
  if (message.tool_calls) out.tool_calls = message.tool_calls;
  if (message.tool_call_id !== undefined) out.tool_call_id = message.tool_call_id;
  for (const [k, v] of Object.entries(message)) if (!(k in out) && k !== "content") out[k] = v;
  return out;
}

/** Parses a stored message column (canonical JSON). */
export function parseStoredMessage(json: string): CanonicalMessage {
  return JSON.parse(json) as CanonicalMessage;
}

/**
 * A stored node (its message column) as the node API shows it, by the tree's
 * API (`muscle-mem:api` of its frame; null for chat): a Responses node as its
 * `input` items, a Gemini node as its content (function-call `args` as an
 * object), an Anthropic or chat node as its message.
 */
export function nodeMessageOf(json: string, api: string | null): TrajectoryMessage {
  const format = trajectoryFormatOf(api);
  return format?.nodeMessage ? format.nodeMessage(json) : trajectoryMessageOf(parseStoredMessage(json));
}

/** A path's stored nodes, root first, as the list a client of the tree's API sends: what the export writes (Responses `input`, Gemini `contents`, chat or Anthropic `messages`). */
export function pathMessagesOf(jsons: readonly string[], api: string | null): TrajectoryMessage[] {
  const format = trajectoryFormatOf(api);
  return format?.pathMessages ? format.pathMessages(jsons) : jsons.map((json) => trajectoryMessageOf(parseStoredMessage(json)));
}
