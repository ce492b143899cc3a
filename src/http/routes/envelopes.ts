import type { ApiError } from "../../core/errors";
import type { ProviderModule } from "../../providers";

/** The Worker's own error in one API's envelope (default: OpenAI's). */
export type ErrorEnvelope = (error: ApiError, headers?: Record<string, string>) => Response;

/** The provider's own error envelope (Anthropic's, Gemini's, OpenAI's) for the Worker's errors on its routes. */
export function envelopeOf(provider: ProviderModule): ErrorEnvelope {
  return provider.withAdapter((adapter) => (error: ApiError, headers?: Record<string, string>) => adapter.errorResponse(error, headers));
}

/** Whether a hono path (`/v1/messages`, `/v1beta/*`) matches `pathname`. */
function matches(path: string, pathname: string): boolean {
  return path.endsWith("/*") ? pathname.startsWith(path.slice(0, -1)) : pathname === path;
}

/** What a provider's route does with a request on one of its own paths (null: not its, the next route's). */
export type RouteTurn = "cached" | "not-allowed" | "relay";

/**
 * The one routing decision on a provider's own paths, which src/http/routes/providers.ts mounts and the
 * app's error handler reads back: its cached POST, else its 405, else its pass-through's claim.
 */
export function turnOf(routes: ProviderModule["routes"], method: string, url: URL, headers: Headers): RouteTurn | null {
  const { isCached, methodNotAllowed, passThrough } = routes;
  if (method === "POST" && (!isCached || isCached(url))) return "cached";
  if (methodNotAllowed) return "not-allowed";
  if (passThrough && (!passThrough.claims || passThrough.claims(headers, url))) return "relay";
  return null;
}

/**
 * The provider whose route answers a request, in the order src/http/routes/providers.ts mounts them: each
 * provider's own paths (turnOf), then the pass-throughs' other paths with their claims; null for the
 * general `/v1/*` pass-through (OpenAI's).
 */
export function providerOfRequest(providers: readonly ProviderModule[], method: string, url: URL, headers: Headers): ProviderModule | null {
  for (const provider of providers) {
    if (provider.routes.paths.some((p) => matches(p, url.pathname)) && turnOf(provider.routes, method, url, headers) !== null) return provider;
  }
  for (const provider of providers) {
    const passThrough = provider.routes.passThrough;
    if (!passThrough || !passThrough.paths.some((p) => matches(p, url.pathname))) continue;
    if (!passThrough.claims || passThrough.claims(headers, url)) return provider;
  }
  return null;
}
