import { z } from "zod";
import { canonicalJson } from "../../core/canonical";
import { RESPONSE_KEY } from "../../core/envelope";
import { fieldsBut, isFields } from "../../core/fields";
import { NUMBERS_KEY, type Spelling } from "../../core/number-text";
import { fieldOf, isSpellings } from "../../core/spelled-json";
import type { ResponsesRequest } from "./schema";

/**
 * What a `response` carried around its output, which a hit serves back, field by field
 * (docs/compat.md, "OpenAI Responses API"):
 * - RENEWED: what names or describes this one response, the hit's own: its id, `created_at` and
 *   `completed_at` (the hit's time), `status`, `error`, `incomplete_details`, `output`, the requested
 *   `model` (not the upstream's dated snapshot) and usage's counts.
 * - ECHOED: request fields the response echoes that the key leaves out (`metadata`, `user`, `store`,
 *   `safety_identifier`, `prompt_cache_key`, `background`, `conversation`; `previous_response_id` comes
 *   from the request as the client sent it): this request's values, never another request's.
 *   `prompt_cache_retention` is this request's when it names one, else the recorded (the upstream's default).
 * - Every other field is served as recorded: what the upstream applied for the keyed request (`reasoning`
 *   with the effort it applied, `text` with its verbosity, `tools` as it normalised them, `tool_choice`,
 *   `temperature`, `top_p`, `truncation`, `max_tool_calls`, `top_logprobs`, `instructions`, …) or decided
 *   (`service_tier`, the tier that answered; `billing`), and any field the API adds.
 * - usage: input and output tokens as recorded, `cached_tokens` 0 (a hit reads no prompt cache), the
 *   recorded `output_tokens_details` (`reasoning_tokens`: part of the output tokens a hit reports) and any
 *   other usage field as recorded.
 * Stored under RESPONSE_KEY in the answer node, outside its hash: the recorded fields, the renewed and echoed
 * ones that the response had as null (their presence; never another request's value), and `usage` as far
 * as it differs from what a hit renders without it. `instructions` and `tools` (the large ones) equal to the
 * keyed request's are not stored either: every request of the tree sends that value, and a hit echoes the
 * request's. Nothing is stored when nothing differs.
 *
 * Numbers: a stored field's number written otherwise than JSON.stringify would (`"temperature": 1.0`, as a
 * Python server writes every float) is stored with its text, under NUMBERS_KEY in the envelope (`[pointer, text]`
 * from the response), and a hit writes it so (src/core/spelled-json.ts). A field a hit echoes from the request is
 * written as this request spelled it (the frame keeps those texts); usage's counts are the hit's.
 */
const RENEWED: ReadonlySet<string> = new Set([
  "id",
  "object",
  "created_at",
  "completed_at",
  "status",
  "error",
  "incomplete_details",
  "output",
  "output_text",
  "model",
  "usage",
]);
/** Renewed fields a response may or may not carry: their presence is stored. */
const RENEWED_IF_PRESENT: ReadonlySet<string> = new Set(["completed_at"]);

/** Request fields the response echoes that are not keyed, and what the API says when the request leaves one out. */
const ECHOED: Readonly<Record<string, unknown>> = {
  metadata: {},
  user: null,
  store: true,
  safety_identifier: null,
  prompt_cache_key: null,
  client_metadata: null,
  background: false,
  conversation: null,
  previous_response_id: null,
};

/** Fields a hit echoes from the request when nothing else is recorded (src/providers/responses/render.ts), not stored when the recorded value is the request's. */
const ECHOED_WHEN_SENT: ReadonlySet<string> = new Set(["instructions", "tools"]);

/** Usage's counts, the hit's. */
const USAGE_COUNTS: ReadonlySet<string> = new Set(["input_tokens", "output_tokens", "total_tokens"]);
const DEFAULT_OUTPUT_DETAILS = { reasoning_tokens: 0 };

type Fields = Record<string, unknown>;
const fields = z.record(z.string(), z.unknown());
/** Input details' count of cached tokens: a hit reads no prompt cache. */
const CACHED: ReadonlySet<string> = new Set(["cached_tokens"]);

/** Usage as stored: its fields but the counts and `cached_tokens`, and `output_tokens_details` unless it says 0 reasoning tokens. */
function storedUsage(usage: unknown): Fields {
  if (!isFields(usage)) return {};
  const out = fieldsBut(usage, USAGE_COUNTS);
  if (isFields(out.input_tokens_details)) {
    const details = fieldsBut(out.input_tokens_details, CACHED);
    if (Object.keys(details).length > 0) out.input_tokens_details = details;
    else delete out.input_tokens_details;
  }
  if (JSON.stringify(out.output_tokens_details) === JSON.stringify(DEFAULT_OUTPUT_DETAILS)) delete out.output_tokens_details;
  return out;
}

/**
 * The keys the answer node stores beside its items for a completed `response` (none when a hit renders the same
 * without), given the frame of the request it answered.
 */
export function responseEnvelopeOf(response: Fields, frame: Fields = {}, spelled: readonly Spelling[] = []): Fields {
  const out: Fields = {};
  const respelled = new Set(spelled.map(([pointer]) => fieldOf(pointer)));
  for (const [k, v] of Object.entries(response)) {
    if (v === undefined) continue;
    if (k in ECHOED || RENEWED_IF_PRESENT.has(k)) out[k] = null;
    else if (RENEWED.has(k)) continue;
    // A request field the upstream echoed as sent is the request's, unless the upstream wrote a number of it otherwise.
    else if (!(ECHOED_WHEN_SENT.has(k) && k in frame && !respelled.has(k) && canonicalJson(frame[k]) === canonicalJson(v))) out[k] = v;
  }
  const usage = storedUsage(response.usage);
  if (Object.keys(usage).length > 0) out.usage = usage;
  const numbers = spelled.filter(([pointer]) => servedAsRecorded(out, pointer));
  if (numbers.length > 0) out[NUMBERS_KEY] = numbers;
  return Object.keys(out).length > 0 ? { [RESPONSE_KEY]: out } : {};
}

/** Usage members a hit writes itself: the counts and the cached input tokens. */
const USAGE_RENEWED: ReadonlySet<string> = new Set([
  "/usage/input_tokens",
  "/usage/output_tokens",
  "/usage/total_tokens",
  "/usage/input_tokens_details/cached_tokens",
]);

/** Whether a hit serves the number at `pointer` (from the response) as recorded in `envelope`: a stored field's, not a count. */
function servedAsRecorded(envelope: Fields, pointer: string): boolean {
  const field = fieldOf(pointer);
  if (field === "usage") return isFields(envelope.usage) && !USAGE_RENEWED.has(pointer);
  return Object.hasOwn(envelope, field) && field !== NUMBERS_KEY && !RENEWED.has(field) && !(field in ECHOED);
}

/**
 * The spellings a hit writes its response with (src/core/spelled-json.ts): the recorded ones of the fields it
 * serves as recorded, and this request's (`requested`, from its frame) of the fields it echoes from the request.
 */
export function servedSpellings(envelope: Fields | null, requested: readonly Spelling[]): Spelling[] {
  const recorded = envelope && isSpellings(envelope[NUMBERS_KEY]) ? envelope[NUMBERS_KEY].filter(([pointer]) => servedAsRecorded(envelope, pointer)) : [];
  const echoed = requested.filter(([pointer]) => {
    const field = fieldOf(pointer);
    return !RENEWED.has(field) && (field in ECHOED || !envelope || !Object.hasOwn(envelope, field));
  });
  return [...recorded, ...echoed];
}

/** A stored answer node's envelope (null when it has none). */
export function storedResponseEnvelope(node: unknown): Fields | null {
  if (!isFields(node)) return null;
  const parsed = fields.safeParse(node[RESPONSE_KEY]);
  return parsed.success ? parsed.data : null;
}

/**
 * Whether stored output details can stand beside `output` tokens: their `reasoning_tokens` a count within
 * them (an import stores any object; the SDK and an agent read it as part of the output tokens).
 */
function servableOutputDetails(details: unknown, output: number): details is Fields {
  if (!isFields(details)) return false;
  const reasoning = details.reasoning_tokens;
  return reasoning === undefined || (typeof reasoning === "number" && Number.isInteger(reasoning) && reasoning >= 0 && reasoning <= output);
}

/**
 * The usage a hit reports: the recorded counts, no cached input, the recorded details (output details with a
 * reasoning count that is not one within the output tokens, which only an import stores, as none) and other fields.
 */
export function servedUsage(envelope: Fields | null, input: number, output: number): Fields {
  const stored = fieldsBut(envelope?.usage, USAGE_COUNTS);
  const { input_tokens_details: inDetails, output_tokens_details: outDetails, ...rest } = stored;
  return {
    input_tokens: input,
    input_tokens_details: { ...(isFields(inDetails) ? inDetails : {}), cached_tokens: 0 },
    output_tokens: output,
    output_tokens_details: servableOutputDetails(outDetails, output) ? outDetails : DEFAULT_OUTPUT_DETAILS,
    total_tokens: input + output,
    ...rest,
  };
}

/**
 * The response fields around `base` (the fields a hit renders, in the API's order): the recorded fields,
 * then the echoed ones (in `base`, recorded, or named by the request) with this request's values, then `base`'s
 * renewed ones, which nothing recorded replaces. `completedAt`: the hit's `completed_at`, when the recording had one.
 */
export function aroundResponse(
  base: Fields,
  envelope: Fields | null,
  body: ResponsesRequest,
  previousResponseId: string | null,
  completedAt: number | null,
): Fields {
  const out: Fields = { ...base };
  const request = body as Fields;
  for (const [k, v] of Object.entries(envelope ?? {})) if (!RENEWED.has(k) && !(k in ECHOED) && k !== "usage" && k !== NUMBERS_KEY) out[k] = v;
  const retention = request.prompt_cache_retention;
  if (retention !== undefined && retention !== null) out.prompt_cache_retention = retention;
  for (const [name, fallback] of Object.entries(ECHOED)) {
    if (!(name in base) && !(envelope && name in envelope) && (request[name] === undefined || request[name] === null)) continue;
    out[name] = name === "previous_response_id" ? previousResponseId : (request[name] ?? fallback);
  }
  if (envelope && "completed_at" in envelope) out.completed_at = completedAt;
  for (const k of RENEWED) if (k in base) out[k] = base[k];
  return out;
}
