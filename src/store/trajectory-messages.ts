import type { CanonicalMessage } from "../cache/messages";

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

/** A stored message in its API's format: OpenAI chat, or Anthropic Messages for `/v1/messages` trees. */
export type TrajectoryMessage = OpenAIMessage | AnthropicStoredMessage;

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
 * `toolu_0`, …).
 */
export function trajectoryMessageOf(message: CanonicalMessage | AnthropicStoredMessage): TrajectoryMessage {
  if (isAnthropicStored(message)) return { role: message.role, content: message.content.map(anthropicBlockOf) };
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
 * A one-line preview of a message from its leading content and tool calls,
 * for lists: never the whole message.
 */
export function previewOf(role: string, content: string | null, toolCalls: string | null, toolCallId: string | null, max = 160): string {
  const parts: string[] = [];
  if (toolCallId) parts.push(`[${toolCallId}]`);
  if (content) parts.push(content.replace(/\s+/g, " ").trim());
  if (toolCalls) {
    const names = [...toolCalls.matchAll(/"name":"([^"]{1,80})"/g)].map((m) => `${m[1]}()`);
    parts.push(names.length ? `→ ${names.join(", ")}` : "→ tool calls");
  }
  const text = parts.join(" ") || `(${role}, empty)`;
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
