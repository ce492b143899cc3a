import { RENEWED_RESPONSE, StreamEnvelope, type Envelope } from "../../core/envelope";
import { respelledIn } from "../../core/exact-json";
import { JsonEventStream } from "../../core/json-event-stream";
import { isFields, onlyFields } from "../../core/fields";

/** What a complete chat-completions stream assembles into. */
export interface AssembledCompletion {
  message: {
    role: "assistant";
    content: string | null;
    refusal?: string | null;
    /** Each call as assembled; a field other than id, type and function (Gemini's `extra_content`) as sent. */
    tool_calls?: Array<{ id: string; type: "function"; function: { name: string; arguments: string; [field: string]: unknown }; [field: string]: unknown }>;
    function_call?: { name: string; arguments: string };
    /** Other string fields of the deltas (`reasoning_content`, …), concatenated; null when only null was sent. */
    [field: string]: unknown;
  };
  finishReason: string | null;
  usage: { prompt_tokens: number; completion_tokens: number } | null;
  /** What the model sent around the message that a hit serves back (Azure's filter results). */
  envelope: Envelope;
}

interface ChunkToolCall {
  index?: number;
  id?: string;
  type?: string | null;
  function?: { name?: string; arguments?: string };
  [field: string]: unknown;
}

/**
 * Tool-call delta fields assembled; any other (Gemini's `extra_content` with a thought signature, sent whole on
 * the call's delta) is recorded as sent (its own fields: see `kept`).
 */
const CALL_FIELDS = new Set(["index", "id", "type", "function"]);
const CALL_FUNCTION_FIELDS = new Set(["name", "arguments"]);

/** A call being assembled: its text fields, and its other fields (and its function's) as sent, with their JSON text. */
interface CallSlot {
  id: string;
  name: string;
  arguments: string;
  extra: Map<string, { value: unknown; text: string }>;
  fnExtra: Map<string, { value: unknown; text: string }>;
}

interface Delta {
  role?: string;
  content?: string | null;
  refusal?: string | null;
  tool_calls?: ChunkToolCall[] | null;
  function_call?: { name?: string; arguments?: string } | null;
  [field: string]: unknown;
}

/** The values of kept fields, in the order first sent. */
const valuesOf = (kept: ReadonlyMap<string, { value: unknown }>): Record<string, unknown> =>
  Object.fromEntries([...kept].map(([field, { value }]) => [field, value]));

/** Whether a delta's content or refusal is text, null or absent: what the assembler can put back together. */
function isTextOrAbsent(value: unknown): boolean {
  return value === undefined || value === null || typeof value === "string";
}

/** Delta fields assembled on their own; any other string field is concatenated, any other non-null one fails the stream. */
const ASSEMBLED = new Set(["role", "content", "refusal", "tool_calls", "function_call"]);

interface Chunk {
  error?: unknown;
  choices?: Array<{ index?: number; delta?: Delta; finish_reason?: string | null; [field: string]: unknown }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
  [field: string]: unknown;
}

/**
 * Whether a chunk's number at these pointer tokens is served as recorded: not the choice's `index`, nor a tool
 * call's `index` in a delta (a place in the list), nor what a hit renews. A number in a call's other fields
 * (`extra_content`) is recorded, so one written otherwise than JSON.stringify would (`1.0`) fails the stream.
 */
const servedAsParsed = (tokens: string[], choice: boolean): boolean => {
  const [field, list, , inner] = tokens;
  if (!choice) return !RENEWED_RESPONSE.has(field);
  return field !== "index" && !(field === "delta" && list === "tool_calls" && tokens.length === 4 && inner === "index");
};

/**
 * Assembles a streamed chat completion from raw bytes, fed in chunks cut
 * anywhere (even inside a UTF-8 sequence). `result()` is null unless the
 * stream ended with `[DONE]`, carried no error and a finish reason.
 */
export class SseAssembler extends JsonEventStream<Chunk> {
  private content = "";
  private sawContent = false;
  private refusal: string | null | undefined;
  private fn: { name: string; arguments: string } | undefined;
  private readonly fields = new Map<string, string | null>();
  private readonly calls: CallSlot[] = [];
  private finishReason: string | null = null;
  private usage: AssembledCompletion["usage"] = null;
  private readonly envelope = new StreamEnvelope();

  /** Fields of the chunks are recorded as sent (src/core/envelope.ts): a number or key JSON.parse would change fails the stream. */
  protected override readonly exact = "all";

  /** A number written otherwise than JSON.stringify would (`1.0`) in a chunk field a hit serves as recorded: a hit would respell it. */
  protected override losesText(data: string): boolean {
    return respelledIn(data, "choices", servedAsParsed);
  }

  protected override isEndMarker(data: string): boolean {
    return data.trim() === "[DONE]";
  }

  /** An `event: error` (some OpenAI-compatible servers name their error events) fails the stream, whatever its data. */
  protected override isFailureEvent(name: string | undefined): boolean {
    return name === "error";
  }

  protected onEvent(chunk: Chunk): void {
    // An error, or an object that is not a chunk (vLLM's `{"object": "error", …}`; Azure's prompt filter chunk says "").
    if (chunk.error || (typeof chunk.object === "string" && chunk.object !== "" && chunk.object !== "chat.completion.chunk")) this.failed = true;
    if (chunk.usage) this.usage = { prompt_tokens: chunk.usage.prompt_tokens ?? 0, completion_tokens: chunk.usage.completion_tokens ?? 0 };
    this.envelope.chunk(chunk);
    for (const choice of chunk.choices ?? []) {
      // Another choice (`n` > 1 or an upstream that sends several): a hit serves one, so nothing is recorded.
      if ((choice.index ?? 0) !== 0) {
        this.failed = true;
        continue;
      }
      // The answer outside a delta (a server that streams whole `message`s, or legacy completions' `text`): the
      // delta-only assembly would record an answer without it.
      if (choice.message !== undefined || choice.text !== undefined) this.failed = true;
      const delta = choice.delta ?? {};
      this.envelope.choice(choice);
      // Content or a refusal that is not text (Mistral streams content as a list of chunks): never record a guess.
      if (!isTextOrAbsent(delta.content) || !isTextOrAbsent(delta.refusal)) this.failed = true;
      if (typeof delta.content === "string") {
        this.content += delta.content;
        this.sawContent = true;
      }
      if (typeof delta.refusal === "string") this.refusal = (this.refusal ?? "") + delta.refusal;
      else if (delta.refusal === null) this.refusal ??= null;
      for (const call of delta.tool_calls ?? []) this.applyToolCall(call);
      if (delta.function_call) {
        // A field beside the name and arguments would be dropped from the legacy call: never record a guess.
        if (
          !isTextOrAbsent(delta.function_call.name) ||
          !isTextOrAbsent(delta.function_call.arguments) ||
          !onlyFields(delta.function_call, CALL_FUNCTION_FIELDS)
        )
          this.failed = true;
        this.fn ??= { name: "", arguments: "" };
        this.fn.name = this.named(this.fn.name, delta.function_call.name);
        this.fn.arguments += delta.function_call.arguments ?? "";
      }
      this.applyFields(delta);
      if (choice.finish_reason) this.finishReason = choice.finish_reason;
    }
  }

  private applyFields(delta: Delta): void {
    for (const [k, v] of Object.entries(delta)) {
      if (ASSEMBLED.has(k) || v === undefined) continue;
      if (typeof v === "string") this.fields.set(k, (this.fields.get(k) ?? "") + v);
      else if (v === null) this.fields.set(k, this.fields.get(k) ?? null);
      else this.failed = true; // a field this assembler cannot put back together: never record a guess
    }
  }

  private applyToolCall(call: ChunkToolCall): void {
    if ((call.type !== undefined && call.type !== null && call.type !== "function") || (call.function !== undefined && !isFields(call.function))) {
      this.failed = true; // a `custom` call, a function that is not an object: the replay would drop it
      return;
    }
    const index = call.index ?? this.calls.length;
    // A place in the list and text fields only: an index such as -1 or 0.5 dropped the call, and arguments sent
    // as an object were recorded as "[object Object]".
    const fn = call.function;
    if (!Number.isInteger(index) || index < 0 || !isTextOrAbsent(call.id) || !isTextOrAbsent(fn?.name) || !isTextOrAbsent(fn?.arguments)) {
      this.failed = true;
      return;
    }
    const slot = (this.calls[index] ??= { id: "", name: "", arguments: "", extra: new Map(), fnExtra: new Map() });
    // Another id at a taken index: another call (an upstream numbering every call 0), whose arguments would be appended.
    if (call.id && slot.id && call.id !== slot.id) this.failed = true;
    if (call.id) slot.id = call.id;
    slot.name = this.named(slot.name, call.function?.name);
    if (call.function?.arguments) slot.arguments += call.function.arguments;
    this.kept(slot.extra, call, CALL_FIELDS);
    if (fn) this.kept(slot.fnExtra, fn, CALL_FUNCTION_FIELDS);
  }

  /**
   * Keeps a call's fields outside `read` as sent (null ones left out, as before 11-28). Such a field is sent whole
   * (Gemini sends `extra_content` once, on the call's delta): the same field again with another value fails the
   * stream, since no rule says whether it replaces, extends or merges with the first (never record a guess).
   */
  private kept(into: Map<string, { value: unknown; text: string }>, sent: object, read: ReadonlySet<string>): void {
    for (const [field, value] of Object.entries(sent)) {
      if (read.has(field) || value === null || value === undefined) continue;
      const text = JSON.stringify(value);
      const before = into.get(field);
      if (before && before.text !== text) this.failed = true;
      else into.set(field, { value, text });
    }
  }

  /**
   * A call's name after a delta. A name is sent whole: some upstreams send it again on every chunk of the call
   * (Fireworks, MiniMax on NVIDIA NIM), which is still that name (the openai package keeps the last one sent,
   * other clients the first). Another name fails the stream: clients disagree on which one the call has.
   */
  private named(name: string, sent: string | undefined): string {
    if (!sent) return name;
    if (name !== "" && sent !== name) this.failed = true;
    return sent;
  }

  /** The assembled completion, or null when the stream was truncated or carried an error. */
  result(): AssembledCompletion | null {
    this.end();
    if (!this.done || this.failed || this.envelope.failed || !this.finishReason) return null;
    for (let i = 0; i < this.calls.length; i++) {
      const call = this.calls[i];
      if (!call || !call.id || !call.name) return null;
    }
    if (this.fn && !this.fn.name) return null;
    const message: AssembledCompletion["message"] = { role: "assistant", content: this.sawContent ? this.content : null };
    if (this.refusal !== undefined) message.refusal = this.refusal;
    for (const [k, v] of this.fields) message[k] = v;
    if (this.fn) message.function_call = this.fn;
    if (this.calls.length > 0) {
      message.tool_calls = this.calls.map((c) => ({
        id: c.id,
        type: "function",
        function: { name: c.name, arguments: c.arguments, ...valuesOf(c.fnExtra) },
        ...valuesOf(c.extra),
      }));
    }
    return { message, finishReason: this.finishReason, usage: this.usage, envelope: this.envelope.envelope };
  }
}
