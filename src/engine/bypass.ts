import type { Context } from "hono";
import { ApiError } from "../core/errors";
import { forward, queryOf, relayResponse } from "../upstream/forward";
import { CACHE_HEADER } from "../core/protocol";
import { countBypass } from "./counting/count-hit";
import type { WorkerEnv } from "./services";

type Ctx = Context<WorkerEnv>;

/**
 * Sends a request to the model without the cache (chat and Messages routes):
 * nothing is read or recorded, a keyed request's bypass is counted on its
 * tree, and every answer, the upstream's or an unreachable/timeout envelope,
 * says `muscle-mem-cache: bypass`, the Worker's own errors in `errorResponse`'s
 * envelope. The client's query string (`?api-version=`) goes with it unless
 * `target.search` says otherwise.
 */
export async function bypassTo(
  c: Ctx,
  target: { base: string; pathname: string; search?: string; baseVar?: string },
  raw: string,
  treeId?: string,
  errorResponse: (error: ApiError, headers: Record<string, string>) => Response = (error, headers) => error.toResponse(headers),
): Promise<Response> {
  if (treeId) countBypass(c, treeId);
  let upstream: Response;
  try {
    upstream = await forward({
      ...target,
      search: target.search ?? queryOf(c.req.url, target.pathname),
      method: "POST",
      headers: c.req.raw.headers,
      body: raw,
      signal: c.req.raw.signal,
      timeoutMs: c.var.services.config.upstreamTimeoutMs,
    });
  } catch (error) {
    if (error instanceof ApiError) return errorResponse(error, { [CACHE_HEADER]: "bypass" });
    throw error;
  }
  return relayResponse(upstream, upstream.body, { [CACHE_HEADER]: "bypass" });
}
