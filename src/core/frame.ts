import { canonicalJsonMemo } from "./canonical";
import type { ChatRequest } from "./messages";
import { addBodySpellings, addFrameSpellings, type Spelling } from "./number-text";
import { addPropertyOrders, propertyOrderBypass } from "./schema-order";
import { OPENAI_FRAME_HEADERS, reservedFieldOf, upstreamFrameOf, type UpstreamContext } from "./upstream-frame";

/** Parameters that change how the answer is delivered, not what it says. */
export const TRANSPORT_KEYS = new Set([
  "messages",
  "stream",
  "stream_options",
  "user",
  "metadata",
  "store",
  "service_tier",
  "prompt_cache_key",
  "safety_identifier",
]);

/** Frame fields whose property order is not keyed (src/core/schema-order.ts): the tool definitions. */
const TOOL_FIELDS: ReadonlySet<string> = new Set(["tools", "functions"]);
const UNORDERED: ReadonlySet<string> = new Set([...TRANSPORT_KEYS, ...TOOL_FIELDS]);

/**
 * The frame: every request parameter that can change what the model answers
 * (model, tools, tool_choice, response_format, max_tokens, stop, …). Unknown
 * parameters are kept, so they split trees rather than collide. With the
 * live request's `context`, the headers that pick the account, project or
 * beta features (`OpenAI-Organization`, `OpenAI-Project`, `OpenAI-Beta`) and
 * the query string (`?api-version=`) join it (src/core/upstream-frame.ts),
 * and so do the texts of its numbers written otherwise than JSON.stringify
 * would (`"temperature": 1.0`, src/core/number-text.ts), and the order of a structured output schema's
 * properties when it is not sorted (src/core/schema-order.ts).
 */
export function frameOf(body: ChatRequest, context?: UpstreamContext, spelled?: readonly Spelling[]): Record<string, unknown> {
  const frame: Record<string, unknown> = upstreamFrameOf(context, OPENAI_FRAME_HEADERS);
  for (const [key, value] of Object.entries(body)) {
    if (TRANSPORT_KEYS.has(key) || value === null || value === undefined) continue;
    frame[key] = value;
  }
  // The body's spellings outside `messages`, when the caller has read them (src/providers/chat/key.ts reads them once).
  if (spelled) addFrameSpellings(frame, spelled);
  else addBodySpellings(frame, context?.raw, "messages");
  addPropertyOrders(frame, TOOL_FIELDS);
  return frame;
}

export function frameJsonOf(body: ChatRequest, context?: UpstreamContext, spelled?: readonly Spelling[]): string {
  return canonicalJsonMemo(frameOf(body, context, spelled));
}

/**
 * Why a request must skip the cache entirely (null when it may use it):
 * several choices, logprobs, audio, `web_search_options` (the upstream
 * searches the live web before it answers, as the server-side tools the
 * other APIs bypass), a custom (free-form) tool on offer (a call of it is never recorded, so the cache would keep
 * only the answers that did not call it), a schema property named like an array index (its order is lost in parsing), and a
 * body field spelled like a frame entry.
 */
export function bypassReason(body: ChatRequest, context?: UpstreamContext): string | null {
  if (typeof body.n === "number" && body.n > 1) return "n > 1";
  if (body.logprobs === true || typeof body.top_logprobs === "number") return "logprobs";
  if (body.modalities?.includes("audio") || (body as { audio?: unknown }).audio) return "audio output";
  const webSearch = (body as { web_search_options?: unknown }).web_search_options;
  if (webSearch !== null && webSearch !== undefined) return "web search";
  // A call of a custom (free-form) tool is never recorded (src/core/canonical.ts): a cache would keep only the other answers.
  if (body.tools?.some((tool) => tool.type === "custom")) return "custom tool";
  return propertyOrderBypass(body, UNORDERED) ?? reservedFieldOf(body, context, OPENAI_FRAME_HEADERS) ?? reservedMessageField(body, context);
}

/**
 * A live request's message carrying a field spelled like a stored answer's envelope
 * (`muscle-mem:choice`, src/core/envelope.ts): the hash form leaves those out, so it
 * would share the answer of the message without it, although the upstream reads (or
 * rejects) the field. A hit never serves them, so no client echoes them. Imported
 * lines carry them on purpose (an exported answer's envelope): they pass no context.
 */
function reservedMessageField(body: ChatRequest, context: UpstreamContext | undefined): string | null {
  if (!context || !Array.isArray(body.messages)) return null;
  for (const message of body.messages) {
    if (typeof message === "object" && message !== null && Object.keys(message).some((k) => k.startsWith("muscle-mem:"))) return "reserved message field";
  }
  return null;
}
