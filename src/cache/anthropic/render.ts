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

type ServedBlock = { type: "text"; text: string } | { type: "tool_use"; id: string; name: string; input: unknown; inputText: string; caller?: { type: string } };

/** The answer's blocks as served: tool ids replaced by fresh ones, in order. */
function servedBlocks(answer: AnthropicAnswer): ServedBlock[] {
  let calls = 0;
  const out: ServedBlock[] = [];
  for (const block of answer.message.content) {
    if (block.type === "text") out.push({ type: "text", text: block.text });
    else if (block.type === "tool_use") {
      // The input as the model wrote it when recorded (key order, spacing), else the stored value.
      const inputText = block.input_json ?? JSON.stringify(block.input);
      const input: unknown = block.input_json === undefined ? block.input : JSON.parse(block.input_json);
      const caller = block.caller === undefined ? {} : { caller: block.caller as { type: string } };
      out.push({ type: "tool_use", id: servedToolUseId(answer.hash, calls++), name: block.name, input, inputText, ...caller });
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
  const blocks = servedBlocks(answer).map((b) => (b.type === "tool_use" ? { type: b.type, id: b.id, name: b.name, input: b.input, ...(b.caller ? { caller: b.caller } : {}) } : b));
  return messageShell(answer, ctx, blocks, decodeStop(answer.finishReason));
}

function event(type: string, data: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

/**
 * The Messages event stream of a served answer: `message_start`, then per
 * block `content_block_start`, one `text_delta` or `input_json_delta`, and
 * `content_block_stop`, then `message_delta` (stop reason, usage) and `message_stop`.
 */
export function renderEventStream(answer: AnthropicAnswer, ctx: AnthropicRenderContext): string {
  let out = event("message_start", { message: messageShell(answer, ctx, [], { stop_reason: null, stop_sequence: null }, 1) });
  out += event("ping", {});
  servedBlocks(answer).forEach((block, index) => {
    if (block.type === "text") {
      out += event("content_block_start", { index, content_block: { type: "text", text: "" } });
      out += event("content_block_delta", { index, delta: { type: "text_delta", text: block.text } });
    } else {
      out += event("content_block_start", { index, content_block: { type: "tool_use", id: block.id, name: block.name, input: {}, ...(block.caller ? { caller: block.caller } : {}) } });
      out += event("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: block.inputText } });
    }
    out += event("content_block_stop", { index });
  });
  out += event("message_delta", { delta: decodeStop(answer.finishReason), usage: { output_tokens: answer.completionTokens } });
  return out + event("message_stop", {});
}
