import { z } from "zod";
import type { CanonicalMessage } from "./messages";

/**
 * What a chat model sent around its message that a hit serves back as
 * recorded: fields of the choice (Azure's `content_filter_results`) and of the
 * response (Azure's `prompt_filter_results`, the `service_tier` that answered). They are stored in the answer's
 * message under these keys, which its hash form leaves out (a client echoes
 * the message, never the choice), so the answer node and every path through it
 * are keyed as before, and an exported message carries them back on import.
 */
export const CHOICE_KEY = "muscle-mem:choice";
export const RESPONSE_KEY = "muscle-mem:response";

/** Choice fields recorded with the answer. */
const CHOICE_FIELDS = ["content_filter_results"] as const;
/** Response fields recorded with the answer. */
const RESPONSE_FIELDS = ["prompt_filter_results", "service_tier"] as const;
/** Response fields a stream repeats on every chunk (the others come once). */
export const EVERY_CHUNK: ReadonlySet<string> = new Set(["service_tier"]);

/** The keys of a stored message that are not the message (left out of its hash form and its rendering). */
export const ENVELOPE_KEYS: ReadonlySet<string> = new Set([CHOICE_KEY, RESPONSE_KEY]);

type Fields = Record<string, unknown>;

/** The choice's and the response's recorded fields. */
export interface Envelope {
  choice: Fields;
  response: Fields;
}

const storedFields = z.record(z.string(), z.unknown());

/** The non-null values of `names` in `source`. */
function pick(source: unknown, names: readonly string[]): Fields {
  const out: Fields = {};
  if (typeof source !== "object" || source === null) return out;
  for (const name of names) {
    const value = (source as Fields)[name];
    if (value !== undefined && value !== null) out[name] = value;
  }
  return out;
}

/** The envelope of an upstream JSON answer: its choice's and its own recorded fields. */
export function envelopeFrom(choice: unknown, response: unknown): Envelope {
  return { choice: pick(choice, CHOICE_FIELDS), response: pick(response, RESPONSE_FIELDS) };
}

/** `message` with a non-empty envelope under its keys (the message itself when there is none, or it is not an object). */
export function withEnvelope(message: unknown, envelope: Envelope): unknown {
  if (typeof message !== "object" || message === null || Array.isArray(message)) return message;
  const out: Fields = { ...(message as Fields) };
  if (Object.keys(envelope.choice).length > 0) out[CHOICE_KEY] = envelope.choice;
  if (Object.keys(envelope.response).length > 0) out[RESPONSE_KEY] = envelope.response;
  return out;
}

/** A stored message's envelope (empty for an answer recorded without one). */
export function envelopeOf(message: CanonicalMessage): Envelope {
  const choice = storedFields.safeParse(message[CHOICE_KEY]);
  const response = storedFields.safeParse(message[RESPONSE_KEY]);
  return { choice: choice.success ? choice.data : {}, response: response.success ? response.data : {} };
}

/** `to` with the envelope of `from` (a message derived from a stored one, such as a declared template's). */
export function keepEnvelope(to: CanonicalMessage, from: CanonicalMessage): CanonicalMessage {
  if (!(CHOICE_KEY in from) && !(RESPONSE_KEY in from)) return to;
  return withEnvelope(to, envelopeOf(from)) as CanonicalMessage;
}

/**
 * The envelope of a streamed answer, read chunk by chunk: Azure sends its prompt
 * filter results once, in a chunk with no choices, and annotates the content with
 * `content_filter_results` on a choice (`{}` on the chunks it did not filter). A
 * hit sends one annotation. A stream that annotates its content more than once
 * (long answers under Azure's default streaming filter) or carries an asynchronous
 * filter's `content_filter_offsets` has annotations no hit can send back where they
 * were: its answer is recorded without them (as every answer was before they were
 * kept), so that such answers are still cached. A stream that sends its prompt
 * filter results twice or names two tiers is `failed`: the answer is not recorded.
 */
export class StreamEnvelope {
  private readonly fields: Envelope = { choice: {}, response: {} };
  failed = false;
  private annotated = false;
  /** The content's annotations cannot be served back as streamed: none is kept. */
  private unservable = false;

  /** What the answer is recorded with. */
  get envelope(): Envelope {
    return this.unservable ? { choice: {}, response: this.fields.response } : this.fields;
  }

  /** A chunk's own fields. */
  chunk(chunk: Fields): void {
    for (const [name, value] of Object.entries(pick(chunk, RESPONSE_FIELDS))) {
      const known = this.fields.response[name];
      // A hit sends one value: once, or the same on every chunk.
      if (known !== undefined && (!EVERY_CHUNK.has(name) || JSON.stringify(known) !== JSON.stringify(value))) this.failed = true;
      this.fields.response[name] = value;
    }
  }

  /** The fields of the answer's choice in one chunk. */
  choice(choice: Fields): void {
    if (choice.content_filter_offsets !== undefined && choice.content_filter_offsets !== null) this.unservable = true;
    const results = choice.content_filter_results;
    if (results === undefined || results === null) return;
    if (typeof results === "object" && Object.keys(results).length === 0) {
      this.fields.choice.content_filter_results ??= results;
      return;
    }
    if (this.annotated) this.unservable = true;
    this.annotated = true;
    this.fields.choice.content_filter_results = results;
  }
}
