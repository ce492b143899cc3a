import { canonicalJson } from "../canonical";
import type { MessagesRequest } from "./schema";

/** Parameters that change how the answer is delivered, not what it says. */
export const TRANSPORT_KEYS = new Set(["messages", "stream", "metadata", "service_tier"]);

/** The frame key that keeps Anthropic trees apart from OpenAI trees (no API parameter has a colon). */
export const API_KEY = "muscle-mem:api";

/**
 * Headers that change what the model answers join the frame under their own
 * names: `anthropic-beta` turns on features that change answers. The
 * `anthropic-version` header is left out: it selects the wire format, which
 * hits render themselves, so upgrading the SDK keeps the cache.
 */
export const FRAME_HEADERS = ["anthropic-beta"] as const;

/** Drops `cache_control` (prompt-caching hints) from each item of a list: they never change the answer. */
function withoutCacheControl(items: readonly Record<string, unknown>[]): Record<string, unknown>[] {
  return items.map(({ cache_control: _ignored, ...rest }) => rest);
}

/** `system` as text blocks, so that a string and one text block key the same tree. */
function systemOf(system: MessagesRequest["system"]): unknown {
  if (typeof system === "string") return system === "" ? undefined : withoutCacheControl([{ type: "text", text: system }]);
  return system && system.length > 0 ? withoutCacheControl(system) : undefined;
}

/**
 * The frame of a Messages request: every body parameter that can change the
 * answer (model, system, tools, tool_choice, max_tokens, stop_sequences,
 * temperature, …), the answer-changing headers and the API name. Unknown
 * parameters are kept, so that they split trees rather than collide.
 */
export function anthropicFrameOf(body: MessagesRequest, headers: Headers): Record<string, unknown> {
  const frame: Record<string, unknown> = { [API_KEY]: "anthropic" };
  for (const [key, value] of Object.entries(body)) {
    if (TRANSPORT_KEYS.has(key) || value === null || value === undefined) continue;
    frame[key] = value;
  }
  const system = systemOf(body.system);
  if (system === undefined) delete frame.system;
  else frame.system = system;
  if (body.tools) frame.tools = withoutCacheControl(body.tools);
  for (const name of FRAME_HEADERS) {
    const value = headers.get(name);
    if (value) frame[name] = value;
  }
  return frame;
}

export function anthropicFrameJsonOf(body: MessagesRequest, headers: Headers): string {
  return canonicalJson(anthropicFrameOf(body, headers));
}

/**
 * Why a Messages request must skip the cache (null when it may use it):
 * extended thinking, and server-side state (a message `thread`, a code
 * `container`), where the request carries only part of the conversation and
 * a served answer's id would mean nothing to the upstream.
 */
export function anthropicBypassReason(body: MessagesRequest): string | null {
  if (body.thinking && body.thinking.type !== "disabled") return "extended thinking";
  if (body.thread !== undefined && body.thread !== null) return "server-side thread";
  if (body.container !== undefined && body.container !== null) return "server-side container";
  return null;
}
