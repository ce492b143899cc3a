import { canonicalJsonMemo } from "./canonical";
import type { ChatRequest } from "./messages";

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

/**
 * The frame: every request parameter that can change what the model answers
 * (model, tools, tool_choice, response_format, max_tokens, stop, …). Unknown
 * parameters are kept, so they split trees rather than collide.
 */
export function frameOf(body: ChatRequest): Record<string, unknown> {
  const frame: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    if (TRANSPORT_KEYS.has(key) || value === null || value === undefined) continue;
    frame[key] = value;
  }
  return frame;
}

export function frameJsonOf(body: ChatRequest): string {
  return canonicalJsonMemo(frameOf(body));
}

/** Why a request must skip the cache entirely (null when it may use it). */
export function bypassReason(body: ChatRequest): string | null {
  if (typeof body.n === "number" && body.n > 1) return "n > 1";
  if (body.logprobs === true || typeof body.top_logprobs === "number") return "logprobs";
  if (body.modalities?.includes("audio") || (body as { audio?: unknown }).audio) return "audio output";
  return null;
}
