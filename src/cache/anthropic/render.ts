import type { StoredAnswer } from "../answer";
import { storedAnthropicMessage, type AnthropicCanonicalMessage } from "./schema";
import { decodeStop } from "./stop";

/** A recorded Anthropic answer, validated for rendering. */
export interface AnthropicAnswer {
  hash: string;
  message: AnthropicCanonicalMessage;
  finishReason: string;
  promptTokens: number;
  completionTokens: number;
}

/** Validated answers by stored object: a hot-cache hit serves the same object again without re-validating. */
const validated = new WeakMap<StoredAnswer, AnthropicAnswer | null>();

/** Reads a stored answer as an Anthropic message; null when the node holds something else. */
export function anthropicAnswerOf(answer: StoredAnswer): AnthropicAnswer | null {
  const known = validated.get(answer);
  if (known !== undefined) return known;
  const parsed = storedAnthropicMessage.safeParse(answer.message as unknown);
  const { hash, finishReason, promptTokens, completionTokens } = answer;
  const result = parsed.success && parsed.data.role === "assistant" ? { hash, message: parsed.data as AnthropicCanonicalMessage, finishReason, promptTokens, completionTokens } : null;
  validated.set(answer, result);
  return result;
}

/** Fresh `tool_use` ids for a served answer: deterministic per node, unique per call. */
export function servedToolUseId(answerHash: string, index: number): string {
  return `toolu_mm${answerHash.slice(0, 20)}${index.toString(36)}`;
}

export interface AnthropicRenderContext {
  /** The message id (`msg_…`). */
  id: string;
  model: string;
}

/** A block as served: the stored block with a fresh tool id, and for a call its input as the model wrote it. */
type ServedBlock = { type: "text"; block: Record<string, unknown> } | { type: "tool_use"; block: Record<string, unknown>; inputText: string };

/** The answer's blocks as served, in order, each with the fields it was recorded with; tool ids replaced by fresh ones. */
function servedBlocks(answer: AnthropicAnswer): ServedBlock[] {
  let calls = 0;
  const out: ServedBlock[] = [];
  for (const block of answer.message.content) {
    if (block.type === "text") out.push({ type: "text", block });
    else if (block.type === "tool_use") {
      // The input as the model wrote it when recorded (key order, spacing), else the stored value.
      const { input_json: written, ...fields } = block;
      const inputText = written ?? JSON.stringify(block.input);
      const input: unknown = written === undefined ? block.input : JSON.parse(written);
      out.push({ type: "tool_use", block: { ...fields, id: servedToolUseId(answer.hash, calls++), input }, inputText });
    }
  }
  return out;
}

function usageOf(answer: AnthropicAnswer, outputTokens = answer.completionTokens) {
  return { input_tokens: answer.promptTokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: outputTokens };
}

function messageShell(answer: AnthropicAnswer, ctx: AnthropicRenderContext, content: unknown[], stop: { stop_reason: string | null; stop_sequence: string | null }, outputTokens?: number) {
  return { id: ctx.id, type: "message", role: "assistant", model: ctx.model, content, ...stop, usage: usageOf(answer, outputTokens) };
}

/** A `message` object for a served answer, as the Messages API shapes it. */
export function renderMessage(answer: AnthropicAnswer, ctx: AnthropicRenderContext): Record<string, unknown> {
  return messageShell(answer, ctx, servedBlocks(answer).map((b) => b.block), decodeStop(answer.finishReason));
}

function event(type: string, data: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

/**
 * The Messages event stream of a served answer: `message_start`, then per
 * block `content_block_start` (the block's other fields, as the API sends
 * them there), one `text_delta` (none for an empty text) or `input_json_delta`,
 * and `content_block_stop`, then `message_delta` (stop reason, usage) and `message_stop`.
 */
export function renderEventStream(answer: AnthropicAnswer, ctx: AnthropicRenderContext): string {
  let out = event("message_start", { message: messageShell(answer, ctx, [], { stop_reason: null, stop_sequence: null }, 1) });
  out += event("ping", {});
  servedBlocks(answer).forEach((served, index) => {
    if (served.type === "text") {
      const text = served.block.text as string;
      out += event("content_block_start", { index, content_block: { ...served.block, text: "" } });
      if (text !== "") out += event("content_block_delta", { index, delta: { type: "text_delta", text } });
    } else {
      out += event("content_block_start", { index, content_block: { ...served.block, input: {} } });
      out += event("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: served.inputText } });
    }
    out += event("content_block_stop", { index });
  });
  out += event("message_delta", { delta: decodeStop(answer.finishReason), usage: { output_tokens: answer.completionTokens } });
  return out + event("message_stop", {});
}
