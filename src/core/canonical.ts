import canonicalize from "canonicalize";
import { canonicalText } from "./canonical-text";
import { ENVELOPE_KEYS } from "./envelope";
import { BoundedMemo } from "./memo";
import type { CanonicalMessage, CanonicalToolCall, ChatMessage, FunctionCall, ToolCall } from "./messages";

/** Why a conversation cannot be put in canonical form. */
export type CanonicalError = { kind: "uncacheable"; reason: string } | { kind: "invalid"; message: string; param: string };

/** Whether a canonicalisation result is an error (every message has a role; an error has none). */
export function isCanonicalError(value: CanonicalMessage | CanonicalError): value is CanonicalError {
  return !("role" in value);
}

export type CanonicalResult = { ok: true; messages: CanonicalMessage[]; stored: CanonicalMessage[]; ids: ToolCallIds } | { ok: false; error: CanonicalError };

/**
 * Maps the tool-call ids of one conversation to ordinals, in order of appearance.
 * The same map canonicalises the tool results that answer them.
 */
export class ToolCallIds {
  private readonly byId = new Map<string, string>();

  get count(): number {
    return this.byId.size;
  }

  /** Assigns the next ordinal to `id` (a repeated id keeps its first ordinal). */
  assign(id: string): string {
    const known = this.byId.get(id);
    if (known) return known;
    const ordinal = `call_${this.byId.size}`;
    this.byId.set(id, ordinal);
    return ordinal;
  }

  lookup(id: string): string | undefined {
    return this.byId.get(id);
  }

  /** An independent copy, so that keying an answer never changes the request's map. */
  clone(): ToolCallIds {
    const copy = new ToolCallIds();
    for (const id of this.byId.keys()) copy.assign(id);
    return copy;
  }
}

/** Serialises a value as RFC 8785 canonical JSON. */
export function canonicalJson(value: unknown): string {
  return canonicalize(value) ?? "null";
}

/**
 * `canonicalJson` through an isolate memo of its own, bounded at `maxChars`, keyed by JSON.stringify
 * (about 4x cheaper than RFC 8785 on a tool schema). Equal stringify output means an equal value, so the
 * memo never changes the result.
 */
export function memoisedCanonicalJson(maxChars: number): (value: unknown) => string {
  const known = new BoundedMemo<string>(maxChars, (json) => json.length);
  return (value) => {
    const key = JSON.stringify(value) ?? "undefined";
    const hit = known.get(key);
    if (hit !== undefined) return hit;
    const json = canonicalJson(value);
    known.set(key, json);
    return json;
  };
}

/** Canonical JSON of large values seen again and again (the frame: model and a 14-tool schema). */
export const canonicalJsonMemo = memoisedCanonicalJson(4 * 1024 * 1024);

const knownArguments = new BoundedMemo<string>(4 * 1024 * 1024, (text) => text.length);

/**
 * Tool-call arguments as canonical JSON text: keys sorted, whitespace gone,
 * every number as written (src/core/canonical-text.ts). Arguments that are
 * not JSON, repeat a key or nest too deep stay exactly as they were sent.
 */
export function canonicalArguments(raw: string): string {
  const known = knownArguments.get(raw);
  if (known !== undefined) return known;
  const text = canonicalText(raw) ?? raw;
  knownArguments.set(raw, text);
  return text;
}

type Parts = ReadonlyArray<{ type: string; [k: string]: unknown }>;

/** Fields of a text part that never change the answer (a prompt-caching hint). */
const TEXT_PART_FIELDS = new Set(["type", "text", "cache_control"]);

/**
 * Text content as a string (one part) or a list of strings (several), and a
 * refusal part; an error when a part is not text, carries other fields, or
 * when refusals could be merged (several, or followed by text).
 */
function textContent(content: string | Parts): { text?: string | string[]; refusal?: string } | CanonicalError {
  if (typeof content === "string") return content === "" ? {} : { text: content };
  const texts: string[] = [];
  let refusal: string | undefined;
  for (const part of content) {
    if (part.type === "text" && typeof part.text === "string" && Object.keys(part).every((k) => TEXT_PART_FIELDS.has(k))) {
      if (refusal !== undefined) return uncacheable("text part after a refusal part");
      texts.push(part.text);
    } else if (part.type === "refusal" && typeof part.refusal === "string" && Object.keys(part).length === 2) {
      if (refusal !== undefined) return uncacheable("several refusal parts");
      refusal = part.refusal;
    } else return uncacheable("non-text content part");
  }
  const out: { text?: string | string[]; refusal?: string } = {};
  if (texts.length === 1) out.text = texts[0];
  else if (texts.length > 1) out.text = texts;
  if (refusal !== undefined) out.refusal = refusal;
  return out;
}

function uncacheable(reason: string): CanonicalError {
  return { kind: "uncacheable", reason };
}

/** Unknown fields of a tool call or function call, kept as sent (null ones dropped). */
function extrasOf(value: Record<string, unknown>, known: ReadonlySet<string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (!known.has(k) && v !== null && v !== undefined) out[k] = v;
  return out;
}

const CALL_FIELDS = new Set(["id", "type", "function"]);
const FUNCTION_FIELDS = new Set(["name", "arguments"]);

function canonicalFunction(fn: FunctionCall): FunctionCall {
  return { ...extrasOf(fn, FUNCTION_FIELDS), name: fn.name, arguments: canonicalArguments(fn.arguments) };
}

/**
 * A tool call's fields beyond id, type and function, without an `index` equal to the call's position: the
 * openai package's `.stream()` helper leaves the streamed delta's `index` on each call of the message it
 * assembles, which an agent sends back; it restates the call's place in the list, which the model reads
 * anyway. Any other `index` is keyed as sent.
 */
function callExtras(call: Record<string, unknown>, position: number): Record<string, unknown> {
  const extras = extrasOf(call, CALL_FIELDS);
  if (extras.index === position) delete extras.index;
  return extras;
}

function canonicalToolCalls(calls: readonly ToolCall[], ids: ToolCallIds): CanonicalToolCall[] {
  return calls.map((call, i) => ({ ...callExtras(call, i), id: ids.assign(call.id), type: "function", function: canonicalFunction(call.function) }));
}

/**
 * Fields read by role; every other field of a message is keyed as sent. The
 * ignore list (docs/reliability.md): null fields, empty content, `name: ""`,
 * `annotations: []` and `tool_calls: []` are dropped, tool-call ids become
 * ordinals and arguments canonical text. An answer's recorded envelope
 * (src/core/envelope.ts: what the model sent around the message) is stored, never hashed.
 */
const READ_FIELDS: Record<string, ReadonlySet<string>> = {
  assistant: new Set(["role", "content", "name", "refusal", "tool_calls", "function_call", "annotations", "audio", ...ENVELOPE_KEYS]),
  tool: new Set(["role", "content", "tool_call_id"]),
};
const COMMON_FIELDS = new Set(["role", "content", "name"]);

/** Puts one message in its hash form (see READ_FIELDS for what is dropped). */
export function canonicalMessage(message: ChatMessage, ids: ToolCallIds, index: number): CanonicalMessage | CanonicalError {
  const out: CanonicalMessage = { role: message.role };
  const fields = message as Record<string, unknown>;
  let refusal: string | undefined;
  if (message.content !== null && message.content !== undefined) {
    const text = textContent(message.content as string | Parts);
    if ("kind" in text) return text;
    if (text.text !== undefined) out.content = text.text;
    refusal = text.refusal;
  }
  if (typeof message.name === "string" && message.name !== "") out.name = message.name;
  if (message.role === "assistant") {
    if (typeof message.refusal === "string") {
      if (refusal !== undefined) return uncacheable("refusal both as a part and as a field");
      refusal = message.refusal;
    }
    // A custom (free-form) tool's call has no JSON arguments to canonicalise or replay: the model judges.
    if (message.tool_calls?.some((call) => call.type === "custom")) return uncacheable("custom tool call");
    if (message.tool_calls && message.tool_calls.length > 0) out.tool_calls = canonicalToolCalls(message.tool_calls as ToolCall[], ids);
    const fn = fields.function_call as FunctionCall | null | undefined;
    if (fn) out.function_call = canonicalFunction(fn);
    if (Array.isArray(fields.annotations) && fields.annotations.length > 0) out.annotations = fields.annotations;
    if (fields.audio !== null && fields.audio !== undefined) return uncacheable("audio message");
  }
  if (refusal !== undefined) out.refusal = refusal;
  if (message.role === "tool") {
    const ordinal = ids.lookup(message.tool_call_id);
    if (!ordinal) {
      return {
        kind: "invalid",
        message: `messages[${index}].tool_call_id '${message.tool_call_id}' does not answer any earlier tool call`,
        param: `messages[${index}].tool_call_id`,
      };
    }
    out.tool_call_id = ordinal;
  }
  const read = READ_FIELDS[message.role] ?? COMMON_FIELDS;
  for (const [k, v] of Object.entries(fields)) if (!read.has(k) && v !== null && v !== undefined) out[k] = v;
  return out;
}

/**
 * The form a message is stored in: its hash form, except that tool-call and
 * function-call arguments keep the text the model first produced (key order
 * included), so a replay serves exactly the recorded arguments.
 */
export function storedForm(canonical: CanonicalMessage, original: ChatMessage): CanonicalMessage {
  if (original.role !== "assistant") return canonical;
  // Only messages canonicalMessage accepted get here: function calls only.
  const raw = original.tool_calls as ToolCall[] | null | undefined;
  const rawFn = (original as { function_call?: FunctionCall | null }).function_call;
  const callsKept = !canonical.tool_calls || !raw || canonical.tool_calls.every((call, i) => call.function.arguments === raw[i].function.arguments);
  const fnKept = !canonical.function_call || !rawFn || canonical.function_call.arguments === rawFn.arguments;
  if (callsKept && fnKept) return canonical;
  const out = { ...canonical };
  if (!callsKept && raw)
    out.tool_calls = canonical.tool_calls!.map((call, i) => ({ ...call, function: { ...call.function, arguments: raw[i].function.arguments } }));
  if (!fnKept && rawFn) out.function_call = { ...canonical.function_call!, arguments: rawFn.arguments };
  return out;
}

/**
 * An answer as the model sent it, ids aside: its stored form plus every field
 * the hash form dropped as a no-op (`content: ""` or `null`, `refusal: null`,
 * `annotations: []`, a call's `index` equal to its place, …), so that a hit returns exactly those.
 */
export function answerForm(stored: CanonicalMessage, original: ChatMessage): CanonicalMessage {
  let out: CanonicalMessage | null = null;
  for (const [k, v] of Object.entries(original)) {
    if (k in stored || v === undefined) continue;
    out ??= { ...stored };
    out[k] = v;
  }
  const calls = original.tool_calls as Array<Record<string, unknown>> | null | undefined;
  if (stored.tool_calls && calls?.some((call, i) => call.index === i)) {
    out ??= { ...stored };
    out.tool_calls = stored.tool_calls.map((call, i) => (calls[i]?.index === i ? { index: i, ...call } : call));
  }
  return out ?? stored;
}

/** A stored message back in its hash form: the fields `answerForm` added and raw arguments canonical again. */
export function hashFormOf(stored: CanonicalMessage): CanonicalMessage {
  const out: CanonicalMessage = { ...stored };
  for (const [k, v] of Object.entries(stored)) {
    if (
      v === null ||
      (stored.role === "assistant" && ENVELOPE_KEYS.has(k)) ||
      (k === "content" && (v === "" || (Array.isArray(v) && v.length === 0))) ||
      ((k === "annotations" || k === "tool_calls") && Array.isArray(v) && v.length === 0) ||
      (k === "name" && v === "")
    )
      delete out[k];
  }
  if (out.tool_calls)
    out.tool_calls = out.tool_calls.map((c, i) => ({
      ...callExtras(c, i),
      id: c.id,
      type: c.type,
      function: { ...c.function, arguments: canonicalArguments(c.function.arguments) },
    }));
  if (out.function_call) out.function_call = { ...out.function_call, arguments: canonicalArguments(out.function_call.arguments) };
  return out;
}

/** Canonicalises a whole conversation, numbering tool-call ids in order of appearance. */
export function canonicalConversation(messages: readonly ChatMessage[]): CanonicalResult {
  const ids = new ToolCallIds();
  const out: CanonicalMessage[] = [];
  const stored: CanonicalMessage[] = [];
  for (let i = 0; i < messages.length; i++) {
    const canonical = canonicalMessage(messages[i], ids, i);
    if (isCanonicalError(canonical)) return { ok: false, error: canonical };
    out.push(canonical);
    stored.push(storedForm(canonical, messages[i]));
  }
  return { ok: true, messages: out, stored, ids };
}
