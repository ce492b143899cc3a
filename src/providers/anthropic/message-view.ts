import type { CanonicalMessage } from "../../core/messages";
import { openAIMessageOf, type OpenAIMessage } from "../chat/message-view";
import { ANTHROPIC_ENVELOPE_KEYS } from "./envelope";

/** A message of a tree recorded through `/v1/messages`: Anthropic content blocks, as stored. */
export interface AnthropicStoredMessage {
  [field: string]: unknown;
  role: string;
  content: Array<Record<string, unknown>>;
}

/** Anthropic trees store content as block objects. */
function isAnthropicStored(message: unknown): message is AnthropicStoredMessage {
  const content = (message as { content?: unknown }).content;
  return Array.isArray(content) && content.some((block) => typeof block === "object" && block !== null);
}

/**
 * A stored node of a `/v1/messages` tree as the Anthropic API writes it: the message as stored (ids
 * `toolu_0`, …), with what a recorded answer carried around its content (./envelope.ts), which an import
 * stores back. A node with no block (an empty content) reads as the chat view does.
 */
export function anthropicNodeMessage(json: string): AnthropicStoredMessage | OpenAIMessage {
  const message = JSON.parse(json) as CanonicalMessage | AnthropicStoredMessage;
  if (!isAnthropicStored(message)) return openAIMessageOf(message as CanonicalMessage);
  const around = Object.entries(message).filter(([k]) => ANTHROPIC_ENVELOPE_KEYS.has(k));
  return { role: message.role, content: message.content.map(anthropicBlockOf), ...Object.fromEntries(around) };
}

/** An Anthropic block as the API writes it: a tool input recorded as text (`input_json`) comes back as its value, in the model's key order. */
function anthropicBlockOf(block: Record<string, unknown>): Record<string, unknown> {
  if (typeof block.input_json !== "string") return block;
  const { input_json: text, ...rest } = block;
  return { ...rest, input: JSON.parse(text) as unknown };
}
