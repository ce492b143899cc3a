import { z } from "zod";
import { fieldsBut } from "./fields";
import type { CanonicalMessage } from "./messages";

/**
 * What a chat model sent around its message that a hit serves back as
 * recorded: every field of the choice (vLLM's `stop_reason`, OpenRouter's
 * `native_finish_reason`, Azure's `content_filter_results`, …) and of the
 * response (`service_tier`, Azure's `prompt_filter_results`, OpenRouter's
 * `provider`, Groq's `x_groq`, vLLM's `kv_transfer_params`, …) but those a hit
 * renews or renders itself (RENEWED_RESPONSE, RENDERED_CHOICE). They are
 * stored in the answer's message under these keys, which its hash form leaves
 * out (a client echoes the message, never the choice), so the answer node and
 * every path through it are keyed as before, and an exported message carries
 * them back on import.
 */
export const CHOICE_KEY = "muscle-mem:choice";
export const RESPONSE_KEY = "muscle-mem:response";
/** The response fields a stream sent on some of its chunks only, or changed: a streamed hit sends them once, on its finish chunk. */
export const ONCE_KEY = "muscle-mem:once";

/**
 * Response fields that name, measure or pad this one response: a hit writes its
 * own (ids, `created`, the requested `model`, `system_fingerprint: null`, usage
 * from the recorded token counts) or none (OpenAI's per-chunk `obfuscation`
 * padding); `choices` is rendered.
 */
export const RENEWED_RESPONSE: ReadonlySet<string> = new Set(["id", "object", "created", "model", "choices", "usage", "system_fingerprint", "obfuscation"]);
/** Choice fields a hit renders itself (`logprobs` is null on a hit unless a JSON answer recorded some). */
const RENDERED_CHOICE: ReadonlySet<string> = new Set(["index", "message", "delta", "finish_reason"]);
/** Response fields a stream repeats on every chunk (the others come once). */
export const EVERY_CHUNK: ReadonlySet<string> = new Set(["service_tier"]);
/** Azure's prompt filter results: streamed once, in a chunk of their own before the answer. */
export const PROMPT_FILTERS = "prompt_filter_results";
/** Azure's content annotation, which a streamed hit puts on the content's chunk. */
export const CONTENT_FILTERS = "content_filter_results";

/** The keys of a stored message that are not the message (left out of its hash form and its rendering). */
export const ENVELOPE_KEYS: ReadonlySet<string> = new Set([CHOICE_KEY, RESPONSE_KEY, ONCE_KEY]);

type Fields = Record<string, unknown>;

/** Whether a stored message carries an envelope. */
function hasEnvelope(message: CanonicalMessage): boolean {
  return CHOICE_KEY in message || RESPONSE_KEY in message || ONCE_KEY in message;
}

/**
 * A stored message split into the message itself and its envelope keys as
 * stored (undefined: none). What a learned template compares and renders is
 * the message; the envelope describes one response (Groq's `x_groq.id`
 * differs on every one), so it never decides a template's shape or evidence.
 */
export function splitEnvelope(message: CanonicalMessage): { message: CanonicalMessage; envelope: Fields | undefined } {
  if (!hasEnvelope(message)) return { message, envelope: undefined };
  const rest: Fields = {};
  const envelope: Fields = {};
  for (const [key, value] of Object.entries(message)) (ENVELOPE_KEYS.has(key) ? envelope : rest)[key] = value;
  return { message: rest as CanonicalMessage, envelope };
}

/** The choice's and the response's recorded fields, and the response fields a streamed hit sends once. */
export interface Envelope {
  choice: Fields;
  response: Fields;
  once?: string[];
}

const storedFields = z.record(z.string(), z.unknown());
const storedNames = z.array(z.string());

/** The envelope of an upstream JSON answer: its choice's and its own fields but those a hit renews or renders. */
export function envelopeFrom(choice: unknown, response: unknown): Envelope {
  const choiceFields = fieldsBut(choice, RENDERED_CHOICE);
  // A hit writes `logprobs: null` itself; logprobs the model did send are served as recorded.
  if (choiceFields.logprobs === null) delete choiceFields.logprobs;
  return { choice: choiceFields, response: fieldsBut(response, RENEWED_RESPONSE) };
}

/** `message` with a non-empty envelope under its keys (the message itself when there is none, or it is not an object). */
export function withEnvelope(message: unknown, envelope: Envelope): unknown {
  if (typeof message !== "object" || message === null || Array.isArray(message)) return message;
  const out: Fields = { ...(message as Fields) };
  if (Object.keys(envelope.choice).length > 0) out[CHOICE_KEY] = envelope.choice;
  if (Object.keys(envelope.response).length > 0) out[RESPONSE_KEY] = envelope.response;
  if (envelope.once && envelope.once.length > 0) out[ONCE_KEY] = envelope.once;
  return out;
}

/** A stored message's envelope (empty for an answer recorded without one). */
export function envelopeOf(message: CanonicalMessage): Envelope {
  // Most answers have no envelope: no parse then (a failed safeParse builds an error, on every hit).
  if (!hasEnvelope(message)) return { choice: {}, response: {} };
  const choice = storedFields.safeParse(message[CHOICE_KEY] ?? {});
  const response = storedFields.safeParse(message[RESPONSE_KEY] ?? {});
  const once = message[ONCE_KEY] === undefined ? null : storedNames.safeParse(message[ONCE_KEY]);
  // Only what a recording keeps: an imported envelope never names a field a hit renders or renews (the message, the finish reason, ids, usage).
  return {
    choice: fieldsBut(choice.success ? choice.data : {}, RENDERED_CHOICE),
    response: fieldsBut(response.success ? response.data : {}, RENEWED_RESPONSE),
    ...(once?.success ? { once: once.data } : {}),
  };
}

/** `to` with the envelope of `from` (a message derived from a stored one, such as a declared template's). */
export function keepEnvelope(to: CanonicalMessage, from: CanonicalMessage): CanonicalMessage {
  if (!hasEnvelope(from)) return to;
  return withEnvelope(to, envelopeOf(from)) as CanonicalMessage;
}

/**
 * `envelope` with only the choice and response fields `keep` accepts, and the names sent once that are
 * still among the response's: what a template's answer may carry of the answers it stands for.
 */
export function keptEnvelope(envelope: Envelope, keep: (part: "choice" | "response", name: string, value: unknown) => boolean): Envelope {
  const kept = (part: "choice" | "response"): Fields => Object.fromEntries(Object.entries(envelope[part]).filter(([name, value]) => keep(part, name, value)));
  const choice = kept("choice");
  const response = kept("response");
  const once = envelope.once?.filter((name) => name in response) ?? [];
  return { choice, response, ...(once.length > 0 ? { once } : {}) };
}

/**
 * The envelope of a streamed answer, read chunk by chunk. A response field is
 * served on every chunk when the stream sent it, with one value, on every chunk
 * with a choice (OpenRouter's `provider`); otherwise once, on the finish chunk,
 * with the last value sent (Groq's `x_groq`, which the last chunk sends again
 * with its usage): what an OpenAI client keeps of it either way. A choice field
 * keeps its last non-null value (vLLM's `stop_reason`, null until the finish
 * chunk). A stream with `logprobs` is `failed` (a hit cannot send them back
 * token by token), and so is one that sends its prompt filter results twice or
 * names two tiers: the answer is not recorded.
 *
 * Azure sends its prompt filter results once, in a chunk with no choices, and
 * annotates the content with `content_filter_results` on a choice (`{}` on the
 * chunks it did not filter). A hit sends one annotation. A stream that
 * annotates its content more than once (long answers under Azure's default
 * streaming filter) or carries an asynchronous filter's `content_filter_offsets`
 * has annotations no hit can send back where they were: its answer is recorded
 * without them (as every answer was before they were kept), so that such
 * answers are still cached.
 */
export class StreamEnvelope {
  private readonly fields: Envelope = { choice: {}, response: {} };
  failed = false;
  private annotated = false;
  /** The content's annotations cannot be served back as streamed: none is kept. */
  private unservable = false;
  /** Chunks with a choice, and per response field how many of them carried it with its first value. */
  private choiceChunks = 0;
  private readonly steady = new Map<string, number>();
  private readonly changed = new Set<string>();

  /** What the answer is recorded with. */
  get envelope(): Envelope {
    const choice = { ...this.fields.choice };
    if (this.unservable) delete choice[CONTENT_FILTERS];
    const once = Object.keys(this.fields.response).filter(
      (name) => name !== PROMPT_FILTERS && !EVERY_CHUNK.has(name) && (this.changed.has(name) || this.steady.get(name) !== this.choiceChunks),
    );
    return { choice, response: this.fields.response, ...(once.length > 0 ? { once } : {}) };
  }

  /** A chunk's own fields. */
  chunk(chunk: Fields): void {
    const withChoice = Array.isArray(chunk.choices) && chunk.choices.length > 0;
    if (withChoice) this.choiceChunks++;
    for (const [name, value] of Object.entries(fieldsBut(chunk, RENEWED_RESPONSE))) {
      const seen = name in this.fields.response;
      const same = seen && JSON.stringify(this.fields.response[name]) === JSON.stringify(value);
      // A hit sends one tier on every chunk and the prompt filter results once.
      if (seen && (name === PROMPT_FILTERS || (EVERY_CHUNK.has(name) && !same))) this.failed = true;
      if (seen && !same) this.changed.add(name);
      if (withChoice && (!seen || same)) this.steady.set(name, (this.steady.get(name) ?? 0) + 1);
      this.fields.response[name] = value;
    }
  }

  /** The fields of the answer's choice in one chunk. */
  choice(choice: Fields): void {
    for (const [name, value] of Object.entries(fieldsBut(choice, RENDERED_CHOICE))) {
      if (name === CONTENT_FILTERS) this.contentFilters(value);
      else if (name === "content_filter_offsets") this.unservable ||= value !== null;
      else if (name === "logprobs") this.failed ||= value !== null;
      else if (value !== null || !(name in this.fields.choice)) this.fields.choice[name] = value;
    }
  }

  private contentFilters(results: unknown): void {
    if (results === null) return;
    if (typeof results === "object" && Object.keys(results).length === 0) {
      this.fields.choice[CONTENT_FILTERS] ??= results;
      return;
    }
    if (this.annotated) this.unservable = true;
    this.annotated = true;
    this.fields.choice[CONTENT_FILTERS] = results;
  }
}
