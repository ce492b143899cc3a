import type { Context } from "hono";
import { ApiError } from "../core/errors";
import { forward, relayResponse } from "../upstream/forward";
import { CACHE_HEADER } from "../core/protocol";
import type { WorkerEnv } from "../engine/services";
import { OPENAI_UPSTREAM } from "../providers/openai";
import { upstreamBase } from "../providers/upstream";
import type { ErrorEnvelope } from "./routes/envelopes";

type Ctx = Context<WorkerEnv>;

const openAiEnvelope: ErrorEnvelope = (error, headers) => error.toResponse(headers);

/**
 * Relays the request to `base` unchanged (method, headers, body, streaming), marked `bypass`; an unreachable
 * or slow upstream is answered in `envelope` (the API's own error shape).
 */
export async function relayTo(c: Ctx, base: string, baseVar: string = OPENAI_UPSTREAM.name, envelope: ErrorEnvelope = openAiEnvelope): Promise<Response> {
  const url = new URL(c.req.url);
  const method = c.req.method;
  let upstream: Response;
  try {
    upstream = await forward({
      base,
      pathname: url.pathname,
      search: url.search,
      method,
      headers: c.req.raw.headers,
      body: method === "GET" || method === "HEAD" ? null : c.req.raw.body,
      signal: c.req.raw.signal,
      timeoutMs: c.var.services.config.upstreamTimeoutMs,
      baseVar,
    });
  } catch (error) {
    // Unreachable or timed out: the envelope, still saying what the cache did.
    if (error instanceof ApiError) return envelope(error, { [CACHE_HEADER]: "bypass" });
    throw error;
  }
  return relayResponse(upstream, upstream.body, { [CACHE_HEADER]: "bypass" });
}

/** Any other `/v1/*` route goes to OpenAI's upstream (`UPSTREAM_BASE_URL`) unchanged, streaming included. */
export function passThrough(c: Ctx): Promise<Response> {
  const { base, baseVar } = upstreamBase(c.var.services.config, OPENAI_UPSTREAM);
  return relayTo(c, base, baseVar);
}
