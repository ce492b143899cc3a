import type { MiddlewareHandler } from "hono";
import type { WorkerEnv } from "../engine/services";
import type { ProviderModule } from "../providers";

/**
 * `OPTIONS` on the model routes (`/v1/*`, `/v1beta/*`), a browser's CORS preflight included, answered by the
 * Worker itself on every route alike: a 204 with `Allow` and no CORS grant, before the access gate, never
 * forwarded to a provider. The Worker is for server-side clients: a browser page on another origin is refused
 * the same way on a hit, a miss and a pass-through (a relayed preflight would have let the upstream grant
 * what the Worker's own hits then could not honour). `Allow` is `POST, OPTIONS` on a route that answers only
 * its cached POST (chat, Messages), else every method a pass-through may relay.
 */
export function modelOptions(providers: readonly ProviderModule[]): MiddlewareHandler<WorkerEnv> {
  const postOnly = new Set(providers.filter((p) => p.routes.methodNotAllowed).flatMap((p) => p.routes.paths));
  return async (c, next) => {
    if (c.req.method !== "OPTIONS") return next();
    const allow = postOnly.has(new URL(c.req.url).pathname) ? "POST, OPTIONS" : "GET, HEAD, POST, DELETE, OPTIONS";
    return new Response(null, { status: 204, headers: { allow, "cache-control": "no-store" } });
  };
}
