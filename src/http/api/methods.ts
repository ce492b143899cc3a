import type { MiddlewareHandler } from "hono";
import { ApiError } from "../../core/errors";

/** One API route as registered: its method and its path under /api (hono's `:param` and `:param{regex}` syntax). */
export type RouteSpec = readonly [method: string, path: string];

/** A route path as a regular expression over the path under /api (`:id` one segment, `:id{.+}` the rest). */
function patternOf(path: string): RegExp {
  const source = path
    .split("/")
    .map((part) => {
      if (!part.startsWith(":")) return part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      const custom = /\{(.+)\}$/.exec(part);
      return custom ? `(?:${custom[1]})` : "[^/]+";
    })
    .join("/");
  return new RegExp(`^${source}/?$`);
}

/** The methods a path answers (GET implies HEAD), in a stable order, for an `Allow` header. */
function allowOf(methods: ReadonlySet<string>): string {
  const all = new Set(methods);
  if (all.has("GET")) all.add("HEAD");
  all.add("OPTIONS");
  return ["GET", "HEAD", "POST", "DELETE", "OPTIONS"].filter((m) => all.has(m)).join(", ");
}

/**
 * The API's method check, before authentication: a known path asked with a method it does not answer is a
 * 405 with `Allow` (never a 404, which would read as a missing route), and `OPTIONS` is a 204 with `Allow`
 * and no CORS headers, so a browser on another origin is refused before any credential is read. An unknown
 * path goes on (and ends in the 404 after authentication).
 */
export function methodCheck(routes: readonly RouteSpec[], prefix: string): MiddlewareHandler {
  const byPath = new Map<string, { pattern: RegExp; methods: Set<string> }>();
  for (const [method, path] of routes) {
    const entry = byPath.get(path) ?? { pattern: patternOf(path), methods: new Set<string>() };
    entry.methods.add(method);
    byPath.set(path, entry);
  }
  const entries = [...byPath.values()];
  return async (c, next) => {
    const path = c.req.path.startsWith(prefix) ? c.req.path.slice(prefix.length) : c.req.path;
    const matching = entries.filter((e) => e.pattern.test(path));
    if (matching.length === 0) return next();
    const methods = new Set(matching.flatMap((e) => [...e.methods]));
    const method = c.req.method;
    if (methods.has(method) || (method === "HEAD" && methods.has("GET"))) return next();
    const allow = allowOf(methods);
    if (method === "OPTIONS") return new Response(null, { status: 204, headers: { allow } });
    return new ApiError("method_not_allowed", `${method} is not allowed on ${prefix}${path}: use ${allow}.`).toResponse({ allow });
  };
}
