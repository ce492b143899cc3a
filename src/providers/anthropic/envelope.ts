import { z } from "zod";
import { RESPONSE_KEY } from "../../core/envelope";
import { fieldsBut, isFields } from "../../core/fields";

/**
 * What a Messages answer carried around its content, which a hit serves back
 * as recorded: every top-level field of the message but those a hit renders
 * itself (RENDERED: its own id, the requested model, the content, the stop
 * reason and sequence) — `stop_details`, `container` and `diagnostics` (null
 * when unused), and whatever field the API adds — and every field of its
 * usage but the token counts (COUNTS: a hit reports the recorded input and
 * output tokens and no prompt cache read or written) — `cache_creation` (its
 * counts served as 0), `service_tier`, `inference_geo`, `speed`,
 * `server_tool_use`, `output_tokens_details`. Stored in the answer's message
 * under RESPONSE_KEY (the message fields, `usage` among them), outside its hash.
 *
 * A streamed answer keeps them as `message_start` carried them, and under
 * DELTA_KEY what its `message_delta` carried beyond the stop reason, stop
 * sequence and output tokens (`stop_details`, `container`, cumulative counts
 * whose values a hit renews, …), so a streamed hit sends each in the event
 * that carried it. An answer recorded from JSON (no DELTA_KEY) streams its
 * fields in `message_start`, `stop_details` null there and its value in `message_delta`.
 */
export const DELTA_KEY = "muscle-mem:delta";

/** The stored message's keys that are not the message. */
export const ANTHROPIC_ENVELOPE_KEYS: ReadonlySet<string> = new Set([RESPONSE_KEY, DELTA_KEY]);

type Fields = Record<string, unknown>;

/** Message fields a hit renders itself (`usage` is rendered from the counts and the stored fields). */
export const RENDERED: ReadonlySet<string> = new Set(["id", "type", "role", "model", "content", "stop_reason", "stop_sequence"]);
/** Usage's token counts: a hit's own (the recorded input and output tokens; no prompt cache read or written). */
export const COUNTS: ReadonlySet<string> = new Set(["input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"]);
/** Stop fields a `message_delta` carries in `delta`, which a hit renders. */
const DELTA_RENDERED: ReadonlySet<string> = new Set(["stop_reason", "stop_sequence"]);
/**
 * Fields that, set, name state or edits upstream (a code-execution container, its expiry; context edits the
 * API applied): an answer carrying one is relayed and not recorded. Null, they are recorded and served.
 */
const UNRECORDABLE = ["container", "context_management"] as const;

/** The stored envelope of an answer: its message fields (`usage` with the non-count fields) and, streamed, its `message_delta`'s. */
export interface AnthropicEnvelope {
  message: Fields;
  delta?: { top: Fields; delta: Fields; usage: Fields };
}

const fields = z.record(z.string(), z.unknown());

/** Whether a message, a `message_delta`'s delta or the event itself sets a field that keeps the answer from being recorded. */
export function setsUnrecordable(value: unknown): boolean {
  return isFields(value) && UNRECORDABLE.some((name) => value[name] !== null && value[name] !== undefined);
}

/** A message's (or `message_start`'s message's) fields as stored: all but the rendered ones, usage without its counts. */
export function messageFieldsOf(message: Fields): Fields {
  const out = fieldsBut(message, RENDERED);
  delete out.usage;
  const usage = fieldsBut(message.usage, COUNTS);
  if (Object.keys(usage).length > 0) out.usage = usage;
  return out;
}

/**
 * A `message_delta` event's fields as stored: its own (but `type`), its delta's but the stop reason and sequence,
 * and its usage's but `output_tokens`; the other counts are kept, their values renewed by a hit.
 */
export function deltaFieldsOf(event: Fields): { top: Fields; delta: Fields; usage: Fields } {
  return {
    top: fieldsBut(event, new Set(["type", "delta", "usage"])),
    delta: fieldsBut(event.delta, DELTA_RENDERED),
    usage: fieldsBut(event.usage, new Set(["output_tokens"])),
  };
}

/** The stored keys of an envelope (none when a hit would render the same without it). */
export function envelopeKeysOf(envelope: AnthropicEnvelope): Fields {
  const { delta } = envelope;
  const streamed = delta !== undefined && (Object.keys(envelope.message).length > 0 || Object.values(delta).some((part) => Object.keys(part).length > 0));
  return {
    ...(Object.keys(envelope.message).length > 0 || streamed ? { [RESPONSE_KEY]: envelope.message } : {}),
    ...(streamed ? { [DELTA_KEY]: { ...delta.top, delta: delta.delta, usage: delta.usage } } : {}),
  };
}

/** A stored message's envelope; null when it has none (recorded before, or with nothing around its content). */
export function anthropicEnvelopeOf(stored: Fields): AnthropicEnvelope | null {
  const message = fields.safeParse(stored[RESPONSE_KEY]);
  if (!message.success) return null;
  const delta = fields.safeParse(stored[DELTA_KEY]);
  if (!delta.success) return { message: message.data };
  const { delta: inner, usage, ...top } = delta.data;
  return { message: message.data, delta: { top: fieldsBut(top, new Set(["type"])), delta: isFields(inner) ? inner : {}, usage: isFields(usage) ? usage : {} } };
}

/** A value with every number in it 0: prompt-cache counts a hit did not read or write (`cache_creation`). */
function zeroed(value: unknown): unknown {
  if (typeof value === "number") return 0;
  if (Array.isArray(value)) return value.map(zeroed);
  if (isFields(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, zeroed(v)]));
  return value;
}

/** The hit's counts. */
export interface HitCounts {
  input: number;
  output: number;
}

/** A count a hit reports: the recorded input or output tokens, no prompt cache read or written. */
function countOf(name: string, counts: HitCounts): number {
  return name === "input_tokens" ? counts.input : name === "output_tokens" ? counts.output : 0;
}

/** Usage as a message (JSON, or `message_start`) carries it: the hit's counts, then the stored fields. */
export function messageUsage(stored: unknown, counts: HitCounts): Fields {
  const rest = fieldsBut(stored, COUNTS);
  if ("cache_creation" in rest) rest.cache_creation = zeroed(rest.cache_creation);
  return { input_tokens: counts.input, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: counts.output, ...rest };
}

/**
 * Usage as a `message_delta` carries it: its stored fields, each count the hit's (a null one stays null; any
 * other value an import stored, a string or an object, is the hit's count too: the SDK copies it onto the
 * message as a number), and the output tokens.
 */
export function deltaUsage(stored: Fields, counts: HitCounts): Fields {
  const out: Fields = {};
  for (const [k, v] of Object.entries(stored)) out[k] = COUNTS.has(k) ? (v === null ? null : countOf(k, counts)) : k === "cache_creation" ? zeroed(v) : v;
  return { ...out, output_tokens: counts.output };
}

/** `from`'s fields over `to`'s, but a null that would replace a value (a delta's counters and fields are "present or null"). */
function over(to: Fields, from: Fields): Fields {
  const out = { ...to };
  for (const [k, v] of Object.entries(from)) if (v !== null || !(k in out) || out[k] === null) out[k] = v;
  return out;
}

/**
 * `fields` with a `stop_details` that describes another stop than `stopReason` (its `type` is the stop reason it
 * details, `refusal`) as null: the API sends null for a stop without details, and an answer that stopped with
 * details (a refusal) is never recorded, so such a value can only come from an import; the agent reads it
 * beside the stop reason a hit serves.
 */
function stopDetailsFor(fields: Fields, stopReason: string | null): Fields {
  const details = fields.stop_details;
  if (details === undefined || details === null || (isFields(details) && details.type === stopReason)) return fields;
  return { ...fields, stop_details: null };
}

/** The message fields a JSON hit serves for an answer that stopped with `stopReason`: `message_start`'s with what the stream's `message_delta` changed. */
export function finalFields(envelope: AnthropicEnvelope, stopReason: string | null): Fields {
  const { delta } = envelope;
  const message = fieldsBut(envelope.message, RENDERED);
  if (!delta) return stopDetailsFor(message, stopReason);
  const merged = over(over(message, fieldsBut(delta.top, RENDERED)), fieldsBut(delta.delta, RENDERED));
  const usage = over(isFields(message.usage) ? message.usage : {}, delta.usage);
  return stopDetailsFor(Object.keys(usage).length > 0 ? { ...merged, usage } : merged, stopReason);
}

/**
 * What a streamed hit of an answer that stopped with `stopReason` sends: the fields of `message_start`'s message
 * (before any stop), and of `message_delta` (event, delta, usage).
 */
export function streamedFields(
  envelope: AnthropicEnvelope,
  stopReason: string | null,
): { start: Fields; delta: { top: Fields; delta: Fields; usage: Fields } } {
  const start = fieldsBut(envelope.message, RENDERED);
  if (envelope.delta) {
    const { top, delta, usage } = envelope.delta;
    return {
      start: stopDetailsFor(start, null),
      delta: { top: stopDetailsFor(fieldsBut(top, RENDERED), stopReason), delta: stopDetailsFor(fieldsBut(delta, DELTA_RENDERED), stopReason), usage },
    };
  }
  // Recorded from JSON: the stop's details come with the stop reason, as a stream sends them.
  const delta: Fields = {};
  if ("stop_details" in start) {
    delta.stop_details = start.stop_details;
    start.stop_details = null;
  }
  return { start, delta: { top: {}, delta: stopDetailsFor(delta, stopReason), usage: {} } };
}
