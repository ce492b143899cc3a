import { canonicalJson } from "../../core/canonical";
import { addFrameSpellings, type Spelling } from "../../core/number-text";
import { reservedFieldOf, upstreamFrameOf } from "../../core/upstream-frame";
import { addPropertyOrders, propertyOrderBypass } from "../../core/schema-order";
import type { MessagesRequest } from "./schema";
import { serverToolOf } from "./tools";
import { API_FRAME_KEY } from "../../core/protocol";

/** Parameters that change how the answer is delivered, not what it says. */
export const TRANSPORT_KEYS = new Set(["messages", "stream", "metadata", "service_tier"]);

/**
 * Headers that change what the model answers, or whose account answers, join
 * the frame under their own names: `anthropic-beta` turns on features that
 * change answers; `anthropic-workspace-id` and `anthropic-user-profile-id`
 * pick the workspace (and its settings) a credential that can act on several
 * one acts on, and whom it acts for. The `anthropic-version` header is left
 * out: it selects the wire format, which hits render themselves, so upgrading
 * the SDK keeps the cache.
 */
export const FRAME_HEADERS = ["anthropic-beta", "anthropic-workspace-id", "anthropic-user-profile-id"] as const;

/** Frame fields whose property order is not keyed (src/core/schema-order.ts): the tool definitions. */
const TOOL_FIELDS: ReadonlySet<string> = new Set(["tools"]);
const UNORDERED: ReadonlySet<string> = new Set([...TRANSPORT_KEYS, ...TOOL_FIELDS]);

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
 * temperature, …), the answer-changing headers, the query string of a live
 * request's `url`, the texts of numbers written otherwise than JSON.stringify
 * would (`spelled`, src/core/number-text.ts), the order of a structured output
 * schema's properties when it is not sorted (src/core/schema-order.ts) and the API name. Unknown
 * parameters are kept, so that they split trees rather than collide.
 */
export function anthropicFrameOf(body: MessagesRequest, headers: Headers, url?: URL, spelled: readonly Spelling[] = []): Record<string, unknown> {
  const frame: Record<string, unknown> = { [API_FRAME_KEY]: "anthropic" };
  for (const [key, value] of Object.entries(body)) {
    if (TRANSPORT_KEYS.has(key) || value === null || value === undefined) continue;
    frame[key] = value;
  }
  const system = systemOf(body.system);
  if (system === undefined) delete frame.system;
  else frame.system = system;
  if (body.tools) frame.tools = withoutCacheControl(body.tools);
  // The frame headers and the query string, over any body field of the same name (a live request with one bypasses).
  Object.assign(frame, upstreamFrameOf({ url, headers }, FRAME_HEADERS));
  addFrameSpellings(frame, spelled);
  addPropertyOrders(frame, TOOL_FIELDS);
  return frame;
}

export function anthropicFrameJsonOf(body: MessagesRequest, headers: Headers, url?: URL, spelled: readonly Spelling[] = []): string {
  return canonicalJson(anthropicFrameOf(body, headers, url, spelled));
}

/**
 * Why a Messages request must skip the cache (null when it may use it):
 * server-side state (a message `thread`, a code
 * `container`), where the request carries only part of the conversation and
 * a served answer's id would mean nothing to the upstream; `mcp_servers`,
 * whose tools the model reads from servers the request only names; tools the
 * upstream runs (web search, code execution, …: ./tools.ts); a schema property
 * named like an array index (its order is lost in parsing); and, on a live
 * request (`url` given), a body field spelled like a frame entry.
 */
export function anthropicBypassReason(body: MessagesRequest, url?: URL): string | null {
  if (body.thread !== undefined && body.thread !== null) return "server-side thread";
  if (body.container !== undefined && body.container !== null) return "server-side container";
  const mcp = (body as { mcp_servers?: unknown }).mcp_servers;
  if (mcp !== undefined && mcp !== null && !(Array.isArray(mcp) && mcp.length === 0)) return "mcp servers";
  const server = serverToolOf(body.tools);
  if (server) return `server-side tool ${server}`;
  return propertyOrderBypass(body, UNORDERED) ?? reservedFieldOf(body, url ? { url } : undefined, FRAME_HEADERS);
}
