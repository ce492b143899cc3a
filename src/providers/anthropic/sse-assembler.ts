import { respelledIn, scanJson } from "../../core/exact-json";
import { fieldsBut, onlyFields } from "../../core/fields";
import { JsonEventStream } from "../../core/json-event-stream";
import { COUNTS, deltaFieldsOf, messageFieldsOf, RENDERED, setsUnrecordable, type AnthropicEnvelope } from "./envelope";

/** Whether a message's number at these pointer tokens is stored and served as parsed: not a field a hit renders, nor a token count it renews. */
export const messageNumberServed = ([field, inner]: string[]): boolean => !RENDERED.has(field) && !(field === "usage" && COUNTS.has(inner));

/** The same for an event of the stream: `message_start`'s message, a `message_delta`'s fields (its counts renewed); not a block's `index`. */
const eventNumberServed = ([field, ...rest]: string[]): boolean => {
  if (field === "message") return messageNumberServed(rest);
  if (field === "usage") return !COUNTS.has(rest[0]);
  return field !== "index";
};

/**
 * A block being assembled: text, or a tool call whose input arrives as JSON fragments. `extra`: the other
 * fields its `content_block_start` carried (`caller: {type: "direct"}` on a tool call), kept as sent, as a
 * JSON answer's block keeps them.
 */
type Block = (
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; json: string }
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "redacted_thinking"; data: string }
) & { extra: Record<string, unknown> };

/** An assembled content block: its fields as the model sent them. */
type AssembledBlock = (
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: unknown }
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "redacted_thinking"; data: string }
) &
  Record<string, unknown>;

/** Fields of a `content_block_start` the assembler reads (`input` is `{}` there: it streams as `partial_json`). */
const START_FIELDS = new Set(["type", "text", "id", "name", "input", "thinking", "signature", "data"]);

/** The fields of each delta type the assembly reads: any other (non-null) one fails the stream. */
const DELTA_FIELDS: Readonly<Record<string, ReadonlySet<string>>> = {
  text_delta: new Set(["type", "text"]),
  input_json_delta: new Set(["type", "partial_json"]),
  thinking_delta: new Set(["type", "thinking"]),
  signature_delta: new Set(["type", "signature"]),
};

/** What a complete Messages event stream assembles into. */
export interface AssembledMessage {
  message: { role: "assistant"; content: AssembledBlock[] };
  /** Each tool_use's input as the model wrote it (its `partial_json` text), in order. */
  inputTexts: string[];
  stopReason: string;
  stopSequence: string | null;
  usage: { input_tokens: number; output_tokens: number } | null;
  /** What `message_start` and `message_delta` carried around the content (./envelope.ts). */
  envelope: AnthropicEnvelope;
}

interface StreamEvent {
  type?: string;
  index?: number;
  message?: { usage?: { input_tokens?: number; output_tokens?: number }; [field: string]: unknown };
  content_block?: {
    type?: string;
    text?: string;
    id?: string;
    name?: string;
    input?: unknown;
    thinking?: string;
    signature?: string;
    data?: string;
    [field: string]: unknown;
  };
  delta?: {
    type?: string;
    text?: string;
    partial_json?: string;
    thinking?: string;
    signature?: string;
    stop_reason?: string | null;
    stop_sequence?: string | null;
    [field: string]: unknown;
  };
  usage?: { input_tokens?: number | null; output_tokens?: number | null };
  error?: unknown;
}

/**
 * Assembles a streamed Messages answer from raw bytes cut anywhere. `result()`
 * is null unless the stream ended with `message_stop`, carried no `error`
 * event and held only text, `tool_use`, `thinking` (its text and signature as streamed) and
 * `redacted_thinking` blocks (citations and server tools make an answer unrecordable), and set no `container` or
 * `context_management` (./envelope.ts). Every event's data must parse to
 * exactly its text: the message's other fields are recorded as sent.
 */
export class AnthropicSseAssembler extends JsonEventStream<StreamEvent> {
  private readonly blocks: Block[] = [];
  private stopReason: string | null = null;
  private stopSequence: string | null = null;
  private inputTokens: number | null = null;
  private outputTokens: number | null = null;
  private readonly envelope: AnthropicEnvelope = { message: {}, delta: { top: {}, delta: {}, usage: {} } };
  protected override readonly exact = "all";

  /** A number written otherwise than JSON.stringify would (`1.0`) in a field the recording serves: a hit would respell it. */
  protected override losesText(data: string): boolean {
    return respelledIn(data, "content", eventNumberServed);
  }

  /** An `event: error` fails the stream whatever its data: the Anthropic SDK throws on the event's name. */
  protected override isFailureEvent(name: string | undefined): boolean {
    return name === "error";
  }

  protected onEvent(event: StreamEvent): void {
    // A gateway's error object in the stream (`{"error": …}`, no type): never the model's answer.
    if (event.error !== undefined && event.error !== null) {
      this.failed = true;
      return;
    }
    switch (event.type) {
      case "message_start":
        if (setsUnrecordable(event.message)) this.failed = true;
        if (event.message) this.envelope.message = messageFieldsOf(event.message);
        this.inputTokens = event.message?.usage?.input_tokens ?? null;
        this.outputTokens = event.message?.usage?.output_tokens ?? null;
        return;
      case "content_block_start":
        this.start(event);
        return;
      case "content_block_delta":
        this.delta(event);
        return;
      case "message_delta":
        if (setsUnrecordable(event.delta) || setsUnrecordable(event)) this.failed = true;
        this.keepDelta(event);
        this.stopReason = event.delta?.stop_reason ?? this.stopReason;
        this.stopSequence = event.delta?.stop_sequence ?? this.stopSequence;
        if (typeof event.usage?.output_tokens === "number") this.outputTokens = event.usage.output_tokens;
        if (typeof event.usage?.input_tokens === "number") this.inputTokens = event.usage.input_tokens;
        return;
      case "message_stop":
        this.done = true;
        return;
      case "error":
        this.failed = true;
        return;
      default:
        return; // ping, content_block_stop and future events carry nothing to record
    }
  }

  private start(event: StreamEvent): void {
    const block = event.content_block;
    const index = event.index ?? this.blocks.length;
    // A free place in the list: a block at -1 or 1.5 was dropped from the answer, one started again replaced the first.
    if (!Number.isInteger(index) || index < 0 || this.blocks[index] !== undefined) {
      this.failed = true;
      return;
    }
    // An input sent whole: never record a guess of how it combines with the fragments.
    const wholeInput = block?.input !== undefined && block.input !== null && (typeof block.input !== "object" || Object.keys(block.input).length > 0);
    if (!block || wholeInput) {
      this.failed = true;
      return;
    }
    // Any other field (`caller` on a tool call) is kept as sent; text that then streams as other deltas
    // (`citations_delta`) fails in `delta`.
    const extra = fieldsBut(block, START_FIELDS);
    if (block.type === "text") this.blocks[index] = { type: "text", text: block.text ?? "", extra };
    else if (block.type === "tool_use" && block.id && block.name) this.blocks[index] = { type: "tool_use", id: block.id, name: block.name, json: "", extra };
    else if (block.type === "thinking") this.blocks[index] = { type: "thinking", thinking: block.thinking ?? "", signature: block.signature ?? "", extra };
    else if (block.type === "redacted_thinking" && typeof block.data === "string") this.blocks[index] = { type: "redacted_thinking", data: block.data, extra };
    else this.failed = true;
  }

  /** A `message_delta`'s fields, over those of an earlier one (the API sends one). */
  private keepDelta(event: StreamEvent): void {
    const kept = this.envelope.delta ?? { top: {}, delta: {}, usage: {} };
    const fields = deltaFieldsOf(event as Record<string, unknown>);
    this.envelope.delta = { top: { ...kept.top, ...fields.top }, delta: { ...kept.delta, ...fields.delta }, usage: { ...kept.usage, ...fields.usage } };
  }

  private delta(event: StreamEvent): void {
    const block = this.blocks[event.index ?? -1];
    const delta = event.delta;
    // A delta field the assembly does not read (beside its type and its one piece) would be dropped from the answer.
    const read = typeof delta?.type === "string" && Object.hasOwn(DELTA_FIELDS, delta.type) ? DELTA_FIELDS[delta.type] : undefined;
    if (!delta || !read || !onlyFields(delta, read)) {
      this.failed = true;
      return;
    }
    // Text only: a delta sent as an object was recorded as "[object Object]".
    const piece = delta?.text ?? delta?.partial_json ?? delta?.thinking ?? delta?.signature;
    if (typeof piece !== "string" && piece !== undefined) {
      this.failed = true;
      return;
    }
    if (block?.type === "text" && delta?.type === "text_delta") block.text += delta.text ?? "";
    else if (block?.type === "tool_use" && delta?.type === "input_json_delta") block.json += delta.partial_json ?? "";
    else if (block?.type === "thinking" && delta?.type === "thinking_delta") block.thinking += delta.thinking ?? "";
    else if (block?.type === "thinking" && delta?.type === "signature_delta") block.signature += delta.signature ?? "";
    else this.failed = true;
  }

  /** The assembled message, or null when the stream was truncated, failed or holds other blocks. */
  result(): AssembledMessage | null {
    this.end();
    if (!this.done || this.failed || !this.stopReason) return null;
    const content: AssembledMessage["message"]["content"] = [];
    const inputTexts: string[] = [];
    for (let i = 0; i < this.blocks.length; i++) {
      const block = this.blocks[i];
      if (!block) return null;
      if (block.type === "text") {
        content.push({ type: "text", text: block.text, ...block.extra });
        continue;
      }
      if (block.type === "thinking") {
        content.push({ type: "thinking", thinking: block.thinking, signature: block.signature, ...block.extra });
        continue;
      }
      if (block.type === "redacted_thinking") {
        content.push({ type: "redacted_thinking", data: block.data, ...block.extra });
        continue;
      }
      const text = block.json === "" ? "{}" : block.json;
      try {
        content.push({ type: "tool_use", id: block.id, name: block.name, input: JSON.parse(text), ...block.extra });
      } catch {
        return null;
      }
      // Numbers a double cannot hold, repeated keys: what was parsed is not what the model wrote.
      if (scanJson(text).lossy !== null) return null;
      inputTexts.push(text);
    }
    const usage = this.inputTokens === null || this.outputTokens === null ? null : { input_tokens: this.inputTokens, output_tokens: this.outputTokens };
    return {
      message: { role: "assistant", content },
      inputTexts,
      stopReason: this.stopReason,
      stopSequence: this.stopSequence,
      usage,
      envelope: this.envelope,
    };
  }
}
