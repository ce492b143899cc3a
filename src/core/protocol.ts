import { isFields } from "./fields";
/**
 * The names muscle-mem speaks to its clients: its own headers and the shape
 * of its ids. A leaf module (it imports nothing): every layer may use it.
 */

/** Every header of muscle-mem's own starts with this; none is forwarded to the upstream. */
export const HEADER_PREFIX = "muscle-mem-";

/** What the cache did with a request: `hit`, `miss` or `bypass` (response). */
export const CACHE_HEADER = "muscle-mem-cache";
/** The stored node that answered an exact hit (response). */
export const NODE_HEADER = "muscle-mem-node";
/** The caller's namespace within its tenant (request; default `default`). */
export const NAMESPACE_HEADER = "muscle-mem-namespace";
/** The learned template that served a hit, or `declared` (response). */
export const TEMPLATE_HEADER = "muscle-mem-template";
/** Why a miss missed, as known before the response: `new-tree`, `new-branch; depth=5`, … (response). */
export const MISS_HEADER = "muscle-mem-miss";
/** Why a template that matched the request's shape did not serve it, in one line (docs/templates.md). */
export const TEMPLATE_MISS_HEADER = "muscle-mem-template-miss";
/** `follower`: the answer came from a single-flight leader's model call (response). */
export const SINGLE_FLIGHT_HEADER = "muscle-mem-single-flight";
/** Declared variables, a JSON object of strings (request). */
export const BINDINGS_HEADER = "muscle-mem-bindings";
/** `off`: this request's answer teaches no learned template (request). */
export const INDUCTION_HEADER = "muscle-mem-induction";
/** The cursor of an export's next page (response). */
export const NEXT_CURSOR_HEADER = "muscle-mem-next-cursor";
/** The client's D1 bookmark for read-your-writes under read replication (request and response). */
export const BOOKMARK_HEADER = "muscle-mem-d1-bookmark";
/** The code of an error the Worker answered itself (`not_cached`, `invalid_json`, …), whatever the API's envelope (response). */
export const ERROR_HEADER = "muscle-mem-error";
/** The header that carries a request id in and out. */
export const REQUEST_ID_HEADER = "x-request-id";

/** The frame key (and export line param) that names the API a tree was recorded through; chat trees have none. */
export const API_FRAME_KEY = "muscle-mem:api";

/** The API a frame was recorded through (its API_FRAME_KEY), null for Chat Completions (none) or a frame that is not JSON. */
export function frameApi(frameJson: string): string | null {
  try {
    const frame: unknown = JSON.parse(frameJson);
    const api = isFields(frame) ? frame[API_FRAME_KEY] : undefined;
    return typeof api === "string" ? api : null;
  } catch {
    return null;
  }
}

/** The frame key that holds a declared tree's variable names (never sent by a client: the key adds it). */
export const VARIABLES_FRAME_KEY = "muscle-mem-variables";

/** Tree ids, node hashes and tenant ids: 32 lowercase hex characters. */
export const HEX32 = /^[0-9a-f]{32}$/;
