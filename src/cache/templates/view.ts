import { canonicalJson } from "../../core/canonical";
import { isFields } from "../../core/fields";
import { AROUND } from "../../core/stored-json";
import type { CanonicalMessage } from "../../core/messages";

/**
 * How one API's stored messages read as Chat Completions' canonical messages, one for one, and back: the
 * templates (declared and learned) know chat's messages only (leaves.ts decomposes `content`, `tool_calls`
 * and keeps every other field whole), so an API that has a view is templated through it. An API message's
 * texts the model may copy go in `content` (a list of strings, in order), its tool calls in `tool_calls`
 * (arguments as JSON text), and everything else, the block or part structure included, in other fields of the
 * view, which a template never varies. Pure; never throws (null when a message has no view).
 *
 * The one rule that keeps a view safe, enforced by `chatViewOf` and `apiMessageOf` whatever the view does:
 * **a view is read only when it gives the message back** (`fromChat(toChat(m))` is `m` in hash form), so two
 * messages the model reads differently never share a view, and a template cannot serve a request that
 * differs from the ones it learned from in a field the view would have left out. The `muscle-mem:` fields
 * muscle-mem stores around an answer (src/core/envelope.ts and the providers' own) are taken off before
 * `toChat` sees a message; a template's answer is served without them.
 */
/** Where the model stops, as an API's finish reasons and a request's frame say it (stopsBefore). */
export interface StopRules {
  /**
   * The finish reasons of an answer the token limit cut (`max_tokens`, `MAX_TOKENS`, `length`): where such an answer
   * stops depends on how long the values in it are, so no template serves one (the model cuts another value's elsewhere).
   */
  readonly cutFinishes: ReadonlySet<string>;
  /** The stop sequences a request's parsed frame names (none: empty): the model stops where its output would hold one. */
  stopSequences(frame: unknown): readonly string[];
  /** The output token limit a request's parsed frame sets (`max_tokens`, …), or null when it sets none. */
  tokenLimit(frame: unknown): number | null;
}

export interface TemplateView extends StopRules {
  /** The frame's `muscle-mem:api` value of the trees this view reads (`anthropic`, `openai-responses`, `gemini`). */
  readonly api: string;
  /**
   * The chat view of one message as the API stores it on a node (a path message, or an answer as the model
   * sent it: tool-call arguments as the model wrote them, where the API keeps that text), or null.
   */
  toChat(message: unknown): CanonicalMessage | null;
  /** The API's message (as stored on an answer node, ready to serve) for a chat view, or null when it is none of the API's. */
  fromChat(view: CanonicalMessage): unknown;
  /** The message as the API hashes it (what an answer node's hash reads; spelling-only fields such as kept argument texts left out). */
  hashForm(message: unknown): unknown;
  /**
   * Whether declared variables (`muscle-mem-bindings`) are read through this view: its requests keyed with
   * placeholders in a declared tree (src/cache/templates/view-declared.ts). Not where a served answer's id can be
   * chained on (Responses' `previous_response_id`): it would resolve to placeholder messages.
   */
  readonly declares: boolean;
}

/** `message` without the `muscle-mem:` fields stored around it (the same object when it has none). */
export function withoutEnvelope(message: unknown): unknown {
  if (!isFields(message)) return message;
  const keys = Object.keys(message);
  if (!keys.some((k) => k.startsWith(AROUND))) return message;
  return Object.fromEntries(Object.entries(message).filter(([k]) => !k.startsWith(AROUND)));
}

/**
 * `message`'s chat view when the view gives it back (in hash form), with that hash form's canonical JSON (what the
 * node's hash reads), else null. The `muscle-mem:` fields stored around an answer are left out first: a view never
 * sees them. Never throws.
 */
export function readChatView(view: TemplateView, stored: unknown): { chat: CanonicalMessage; hashed: string } | null {
  try {
    const message = withoutEnvelope(stored);
    const chat = view.toChat(message);
    if (chat === null) return null;
    const back = view.fromChat(chat);
    if (back === null) return null;
    const hashed = canonicalJson(view.hashForm(message));
    return canonicalJson(view.hashForm(back)) === hashed ? { chat, hashed } : null;
  } catch {
    return null;
  }
}

/** `message`'s chat view when the view gives it back (readChatView), else null. Never throws. */
export function chatViewOf(view: TemplateView, stored: unknown): CanonicalMessage | null {
  return readChatView(view, stored)?.chat ?? null;
}

/**
 * The API's message for a chat view a template rendered, when that message reads as the same view again
 * (nothing the view holds was lost on the way), else null: then the template does not serve. Never throws.
 */
export function apiMessageOf(view: TemplateView, chat: CanonicalMessage): unknown {
  try {
    const message = view.fromChat(chat);
    if (message === null) return null;
    const again = view.toChat(message);
    return again !== null && canonicalJson(again) === canonicalJson(chat) ? message : null;
  } catch {
    return null;
  }
}

/** What stopsBefore reads of a template's answer: how the learned answer ended and its output tokens, and the rendered chat view. */
export interface RenderedAnswer {
  finishReason: string;
  completionTokens: number;
  message: CanonicalMessage;
}

/** Tokens a value's boundaries may add to the learned answer's count (a tokenizer merges across them otherwise). */
const BOUNDARY_SLACK = 16;

/**
 * Why a template's rendered answer (its chat view) is not what the model would send to a request of this frame,
 * or null (src/cache/templates/view.ts; docs/templates.md, "Which APIs"):
 * - the learned answer was cut by the token limit: with values of another length the model cuts it elsewhere;
 * - its texts or call arguments hold a stop sequence of the request: the model stops before it (a value
 *   `D-4040` under the stop sequence `404`); or its text followed by one of them (where an answer that stopped at
 *   a stop sequence went on) holds another that starts in the text (`D-4041` then `\nObservation:` under `1\n`);
 * - it might not fit the request's token limit: the rendered answer certainly fits only when the learned
 *   answer's output tokens (its fixed text and its own values) and one token per UTF-8 byte of the rendered
 *   texts and arguments (a bound on the new values' tokens) are within it; else a longer value could have been
 *   cut where the learned ones were not.
 * Pure; never throws (a frame it cannot read is a reason).
 */
export function stopsBefore(view: StopRules, frameJson: string, answer: RenderedAnswer): string | null {
  if (view.cutFinishes.has(answer.finishReason)) return `the answer was cut by the token limit (${answer.finishReason}): with other values it stops elsewhere`;
  let stops: readonly string[];
  let limit: number | null;
  try {
    const frame = JSON.parse(frameJson) as unknown;
    stops = view.stopSequences(frame).filter((s) => s !== "");
    limit = view.tokenLimit(frame);
  } catch {
    return "the request's stop sequences and token limit could not be read";
  }
  const chat = answer.message;
  const content = typeof chat.content === "string" ? [chat.content] : Array.isArray(chat.content) ? chat.content.filter((t) => typeof t === "string") : [];
  // Each text, each call's arguments, and the texts joined (a sequence may span two blocks of one output).
  const args = (chat.tool_calls ?? []).map((call) => call.function.arguments);
  const outputs = [...content, content.join(""), ...args];
  const stop = stops.find((s) => outputs.some((text) => text.includes(s)));
  if (stop !== undefined) return `the answer holds the request's stop sequence ${JSON.stringify(stop)}: the model stops there`;
  // An answer that ended at a stop sequence goes on with it: a new value at its end may start another one before it.
  const joined = content.join("");
  const across = stops.find((s) => stops.some((next) => within(`${joined}${next}`, s, joined.length)));
  if (across !== undefined) return `the answer and a stop sequence after it hold the request's stop sequence ${JSON.stringify(across)}: the model stops there`;
  if (limit === null) return null;
  const bound = answer.completionTokens + BOUNDARY_SLACK + [...content, ...args].reduce((n, text) => n + new TextEncoder().encode(text).length, 0);
  return bound <= limit ? null : `the answer might not fit the request's token limit (${limit}; up to ${bound} tokens): a longer value is cut`;
}

/** Whether `s` first occurs in `text` starting before `end`. */
function within(text: string, s: string, end: number): boolean {
  const at = text.indexOf(s);
  return at >= 0 && at < end;
}

/**
 * A frame's token limit field: null when it is absent or null (no limit); a positive integer, also written as a
 * string of digits (proto JSON, which Gemini reads, takes an int32 so); else 0, a limit no answer fits (a value
 * no rule reads is no reason to assume there is no limit: the template's answer is not served).
 */
export function limitOf(value: unknown): number | null {
  if (value === undefined || value === null) return null;
  const n = typeof value === "string" && /^\d{1,15}$/.test(value) ? Number(value) : value;
  return typeof n === "number" && Number.isInteger(n) && n > 0 ? n : 0;
}

/** The strings of `value` when it is a list of them (a frame's stop sequences), else none. */
export function stringsOf(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((s): s is string => typeof s === "string") : typeof value === "string" ? [value] : [];
}

/** The smallest of a frame's token limits, or null when it sets none. */
const smallest = (...limits: Array<number | null>): number | null => {
  const set = limits.filter((n): n is number => n !== null);
  return set.length > 0 ? Math.min(...set) : null;
};

/**
 * Chat Completions' stop rules (the routes keyed as chat is: OpenAI's and Gemini's OpenAI-compatible one): an
 * answer cut by `length`, the frame's `stop` (a string or a list) and `max_tokens` or `max_completion_tokens`.
 */
export const CHAT_STOPS: StopRules = {
  cutFinishes: new Set(["length"]),
  stopSequences: (frame) => (isFields(frame) ? stringsOf(frame.stop) : []),
  tokenLimit: (frame) => (isFields(frame) ? smallest(limitOf(frame.max_tokens), limitOf(frame.max_completion_tokens)) : null),
};
