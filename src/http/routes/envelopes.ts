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

/**
 * The provider whose route answers a request, as src/http/routes/providers.ts mounts them: its cached POST,
 * its 405, then its pass-through's claim; null for the general `/v1/*` pass-through (OpenAI's).
 */
export function providerOfRequest(providers: readonly ProviderModule[], method: string, url: URL, headers: Headers): ProviderModule | null {
  for (const provider of providers) {
    const { paths, isCached, methodNotAllowed } = provider.routes;
    if (!paths.some((p) => matches(p, url.pathname))) continue;
    if (method === "POST" && (!isCached || isCached(url))) return provider;
    if (methodNotAllowed) return provider;
  }
  for (const provider of providers) {
    const passThrough = provider.routes.passThrough;
    if (!passThrough) continue;
    const on = [...provider.routes.paths, ...passThrough.paths].some((p) => matches(p, url.pathname));
    if (on && (!passThrough.claims || passThrough.claims(headers, url))) return provider;
  }
  return null;
}
