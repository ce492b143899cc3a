import type { StoredAnswer } from "../../core/answer";
import { anthropicEnvelopeOf, deltaUsage, finalFields, messageUsage, streamedFields, type AnthropicEnvelope } from "./envelope";
import { storedAnthropicMessage, type AnthropicCanonicalMessage } from "./schema";
import { decodeStop } from "./stop";

/** A recorded Anthropic answer, validated for rendering. */
export interface AnthropicAnswer {
  hash: string;
  message: AnthropicCanonicalMessage;
  finishReason: string;
  promptTokens: number;
  completionTokens: number;
  /** What the model sent around the content (./envelope.ts); null for an answer recorded without. */
  envelope?: AnthropicEnvelope | null;
}

/** Validated answers by stored object: a hot-cache hit serves the same object again without re-validating. */
const validated = new WeakMap<StoredAnswer, AnthropicAnswer | null>();

/** Reads a stored answer as an Anthropic message; null when the node holds something else. */
export function anthropicAnswerOf(answer: StoredAnswer): AnthropicAnswer | null {
  const known = validated.get(answer);
  if (known !== undefined) return known;
  const parsed = storedAnthropicMessage.safeParse(answer.message as unknown);
  const { hash, finishReason, promptTokens, completionTokens } = answer;
  const envelope = parsed.success ? anthropicEnvelopeOf(answer.message as Record<string, unknown>) : null;
  const result =
    // An answer never holds a tool result (a user turn's block): such a row is damaged, and its render would drop the block.
    parsed.success && parsed.data.role === "assistant" && parsed.data.content.every((block) => block.type !== "tool_result")
      ? { hash, message: parsed.data as AnthropicCanonicalMessage, finishReason, promptTokens, completionTokens, envelope }
      : null;
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
type ServedBlock =
  | { type: "text" | "thinking" | "redacted_thinking"; block: Record<string, unknown> }
  | { type: "tool_use"; block: Record<string, unknown>; inputText: string };

/** The answer's blocks as served, in order, each with the fields it was recorded with; tool ids replaced by fresh ones. */
function servedBlocks(answer: AnthropicAnswer): ServedBlock[] {
  let calls = 0;
  const out: ServedBlock[] = [];
  for (const block of answer.message.content) {
    if (block.type === "text" || block.type === "thinking" || block.type === "redacted_thinking") out.push({ type: block.type, block });
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

type Fields = Record<string, unknown>;

/**
 * The message around `content`: the hit's id and the requested model, the stop fields given, the recorded
 * fields (`fields`, which never replace these) and usage with the hit's counts and the recorded other fields.
 */
function messageShell(
  ctx: AnthropicRenderContext,
  content: unknown[],
  stop: { stop_reason: string | null; stop_sequence: string | null },
  fields: Fields,
  usage: Fields,
) {
  const { usage: _stored, ...rest } = fields;
  return { id: ctx.id, type: "message", role: "assistant", model: ctx.model, content, ...stop, ...rest, ...stop, usage };
}

/** A `message` object for a served answer, as the Messages API shapes it. */
export function renderMessage(answer: AnthropicAnswer, ctx: AnthropicRenderContext): Record<string, unknown> {
  const stop = decodeStop(answer.finishReason);
  const fields = answer.envelope ? finalFields(answer.envelope, stop.stop_reason) : {};
  const usage = messageUsage(fields.usage, { input: answer.promptTokens, output: answer.completionTokens });
  return messageShell(
    ctx,
    servedBlocks(answer).map((b) => b.block),
    stop,
    fields,
    usage,
  );
}

/**
 * A served answer's `message` as JSON text: renderMessage's, each tool input written as the model wrote it
 * (`input_json`: `1.0`, `2.50`, integer-like keys in their place), which serialising the parsed input would
 * change (before 11-28 a JSON hit served `{"qty":1}` for `{"qty":1.0}`). An input that serialises to its
 * text anyway (the common case) costs nothing more.
 */
export function renderMessageText(answer: AnthropicAnswer, ctx: AnthropicRenderContext): string {
  const message = renderMessage(answer, ctx);
  const texts = servedBlocks(answer).flatMap((b) => (b.type === "tool_use" ? [b.inputText] : []));
  let marker: string | undefined;
  const spliced: Array<[string, string]> = [];
  let calls = 0;
  message.content = (message.content as Array<Record<string, unknown>>).map((block) => {
    if (block.type !== "tool_use") return block;
    const text = texts[calls++];
    if (text === undefined || JSON.stringify(block.input) === text) return block;
    // A fresh marker, made only when an input needs its text back, cannot occur in the rest of the message.
    marker ??= `\u0000mm-input-${crypto.randomUUID()}-`;
    const placeholder = `${marker}${spliced.length}`;
    spliced.push([JSON.stringify(placeholder), text]);
    return { ...block, input: placeholder };
  });
  let out = JSON.stringify(message);
  for (const [placeholder, text] of spliced) out = out.replace(placeholder, () => text);
  return out;
}

function event(type: string, data: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

/**
 * The Messages event stream of a served answer: `message_start`, then per
 * block `content_block_start` (the block's other fields, as the API sends
 * them there), one `text_delta` (none for an empty text), `input_json_delta`, or for thinking a
 * `thinking_delta` and a `signature_delta` (a redacted thinking block comes whole in its start),
 * and `content_block_stop`, then `message_delta` (stop reason, usage) and `message_stop`.
 */
export function renderEventStream(answer: AnthropicAnswer, ctx: AnthropicRenderContext): string {
  const stop = decodeStop(answer.finishReason);
  const fields = answer.envelope ? streamedFields(answer.envelope, stop.stop_reason) : { start: {}, delta: { top: {}, delta: {}, usage: {} } };
  const counts = { input: answer.promptTokens, output: answer.completionTokens };
  let out = event("message_start", {
    message: messageShell(ctx, [], { stop_reason: null, stop_sequence: null }, fields.start, messageUsage(fields.start.usage, { ...counts, output: 1 })),
  });
  out += event("ping", {});
  servedBlocks(answer).forEach((served, index) => {
    if (served.type === "text") {
      const text = served.block.text as string;
      out += event("content_block_start", { index, content_block: { ...served.block, text: "" } });
      if (text !== "") out += event("content_block_delta", { index, delta: { type: "text_delta", text } });
    } else if (served.type === "thinking") {
      // As the API streams thinking: the block empty, its text in a thinking_delta, its signature in a signature_delta.
      const { thinking, signature } = served.block as { thinking: string; signature: string };
      out += event("content_block_start", { index, content_block: { ...served.block, thinking: "", signature: "" } });
      if (thinking !== "") out += event("content_block_delta", { index, delta: { type: "thinking_delta", thinking } });
      out += event("content_block_delta", { index, delta: { type: "signature_delta", signature } });
    } else if (served.type === "redacted_thinking") {
      out += event("content_block_start", { index, content_block: served.block });
    } else if (served.type === "tool_use") {
      out += event("content_block_start", { index, content_block: { ...served.block, input: {} } });
      out += event("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: served.inputText } });
    }
    out += event("content_block_stop", { index });
  });
  const { top, delta, usage } = fields.delta;
  out += event("message_delta", { ...top, delta: { ...stop, ...delta, ...stop }, usage: deltaUsage(usage, counts) });
  return out + event("message_stop", {});
}
