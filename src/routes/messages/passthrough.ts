import type { Context, Next } from "hono";
import { configOf } from "../../config";
import { forward, relayResponse } from "../../upstream/forward";
import { CACHE_HEADER } from "../chat/respond";

/**
 * Sends the Anthropic SDK's other calls (`/v1/messages/count_tokens`,
 * `/v1/messages/batches`, `/v1/models`, …) to `ANTHROPIC_BASE_URL` unchanged:
 * a request is Anthropic's when it carries `anthropic-version`. Everything else
 * continues to the OpenAI pass-through.
 */
export async function anthropicPassThrough(c: Context<{ Bindings: Env }>, next: Next): Promise<Response | void> {
  if (!c.req.raw.headers.has("anthropic-version")) return next();
  const url = new URL(c.req.url);
  const method = c.req.method;
  const upstream = await forward({
    base: configOf(c.env).anthropicBaseUrl,
    pathname: url.pathname,
    search: url.search,
    method,
    headers: c.req.raw.headers,
    body: method === "GET" || method === "HEAD" ? null : c.req.raw.body,
    signal: c.req.raw.signal,
    timeoutMs: configOf(c.env).upstreamTimeoutMs,
  });
  return relayResponse(upstream, upstream.body, { [CACHE_HEADER]: "bypass" });
}
