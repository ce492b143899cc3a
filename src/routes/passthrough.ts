import type { Context } from "hono";
import { configOf } from "../config";
import { forward, relayResponse } from "../upstream/forward";
import { CACHE_HEADER } from "./chat/respond";

/** Any other `/v1/*` route goes to the upstream unchanged, streaming included. */
export async function passThrough(c: Context<{ Bindings: Env }>): Promise<Response> {
  const url = new URL(c.req.url);
  const method = c.req.method;
  const upstream = await forward({
    base: configOf(c.env).upstreamBaseUrl,
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
