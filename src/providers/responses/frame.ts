import { canonicalJsonMemo } from "../../core/canonical";
import { OPENAI_FRAME_HEADERS, reservedFieldOf, upstreamFrameOf, type UpstreamContext } from "../../core/upstream-frame";
import { addBodySpellings, addFrameSpellings, type Spelling } from "../../core/number-text";
import { addPropertyOrders, propertyOrderBypass } from "../../core/schema-order";
import type { ResponsesRequest } from "./schema";
import { API_FRAME_KEY } from "../../core/protocol";
import { serverToolOf } from "./tools";

/**
 * Parameters that cannot change what the model answers, left out of the
 * frame (the short documented list, docs/api.md): the conversation itself
 * (`input`, keyed as the path), delivery (`stream`, `stream_options`,
 * `service_tier`, `background` when false), bookkeeping (`metadata`, `user`,
 * `safety_identifier`, `store` when not true, Codex's `client_metadata`: thread, turn and session ids and
 * a timestamp, telemetry like `metadata`), the upstream's prompt cache
 * (`prompt_cache_key`, `prompt_cache_retention`) and empty server-state
 * fields (`previous_response_id`, `conversation`, `include` when empty or null).
 * Every other parameter, known or not, is in the frame.
 */
export const IGNORED = new Set([
  "input",
  "stream",
  "stream_options",
  "service_tier",
  "background",
  "metadata",
  "user",
  "safety_identifier",
  "store",
  "prompt_cache_key",
  "prompt_cache_retention",
  "client_metadata",
  "previous_response_id",
  "conversation",
]);

/** Frame fields whose property order is not keyed (src/core/schema-order.ts): the tool definitions. */
const TOOL_FIELDS: ReadonlySet<string> = new Set(["tools"]);
const UNORDERED: ReadonlySet<string> = new Set([...IGNORED, ...TOOL_FIELDS]);

/**
 * The frame of a Responses request: model, instructions, tools, tool_choice, text, reasoning, temperature, …,
 * and with a live request's `context` the OpenAI account headers and the query string (src/core/upstream-frame.ts),
 * the texts of numbers written otherwise than JSON.stringify would (src/core/number-text.ts) and the order of
 * a structured output schema's properties (`text.format.schema`) when it is not sorted (src/core/schema-order.ts).
 */
export function responsesFrameOf(body: ResponsesRequest, context?: UpstreamContext, spelled?: readonly Spelling[]): Record<string, unknown> {
  const frame: Record<string, unknown> = { ...upstreamFrameOf(context, OPENAI_FRAME_HEADERS), [API_FRAME_KEY]: "openai-responses" };
  for (const [key, value] of Object.entries(body)) {
    if (IGNORED.has(key) || value === null || value === undefined) continue;
    if (key === "include" && Array.isArray(value) && value.length === 0) continue;
    frame[key] = value;
  }
  // The body's spellings outside `input`, when the caller has read them (./key.ts reads them once).
  if (spelled) addFrameSpellings(frame, spelled);
  else addBodySpellings(frame, context?.raw, "input");
  addPropertyOrders(frame, TOOL_FIELDS);
  return frame;
}

export function responsesFrameJsonOf(body: ResponsesRequest, context?: UpstreamContext, spelled?: readonly Spelling[]): string {
  return canonicalJsonMemo(responsesFrameOf(body, context, spelled));
}

/**
 * `include` values whose output a recording keeps and a hit serves: the encrypted content of reasoning
 * items (what a stateless agent sends back). Any other (logprobs, server tools' results, image URLs) bypasses.
 */
const RECORDED_INCLUDES: ReadonlySet<string> = new Set(["reasoning.encrypted_content"]);

/**
 * Why a Responses request must skip the cache (null when it may use it).
 * Each reason is server-side state or work the Worker cannot replay:
 * - `store: true`: the client asks the upstream to keep the response (to fetch
 *   it, or chain on it, later); a served answer would have an id it never saw.
 *   An absent `store` is cached: clients that send the whole `input`
 *   (`@openai/agents`) leave it unset, and on a miss the request reaches the
 *   upstream unchanged.
 * - `previous_response_id` (one the Worker served was resolved before keying:
 *   src/engine/previous-response.ts), `conversation`: the conversation lives upstream.
 * - `background`: the upstream runs it as a job to poll.
 * - server-side tools (`web_search`, `file_search`, `code_interpreter`,
 *   `computer_use_preview`, `mcp`, `image_generation`, …): the upstream runs them.
 * - a stored `prompt` template: its text lives upstream and may change.
 * - `include` of output the cache does not record (logprobs, server tools' results; not
 *   `reasoning.encrypted_content`, which it records) and `top_logprobs`.
 * - a schema property named like an array index (`"1"`): its place in the text is lost in parsing.
 * - on a live request (`context` given), a body field spelled like a frame entry.
 */
export function responsesBypassReason(body: ResponsesRequest, context?: UpstreamContext): string | null {
  if (!body.model) return "no model";
  if (body.store === true) return "store: true";
  if (body.background === true) return "background";
  if (body.previous_response_id) return "previous_response_id";
  if (body.conversation !== undefined && body.conversation !== null) return "conversation";
  if (body.prompt !== undefined && body.prompt !== null) return "stored prompt";
  const server = serverToolOf(body.tools);
  if (server) return `server-side tool ${server}`;
  if (body.include && body.include.some((value) => !RECORDED_INCLUDES.has(value))) return "include";
  if (typeof body.top_logprobs === "number" && body.top_logprobs > 0) return "logprobs";
  return propertyOrderBypass(body, UNORDERED) ?? reservedFieldOf(body, context, OPENAI_FRAME_HEADERS);
}
