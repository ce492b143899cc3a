import { ApiError } from "../core/errors";
import { NAMESPACE_HEADER } from "../core/protocol";

/** What the client asked of the cache for this request. */
export interface CacheControls {
  /** Ask the model and record its answer (`cache-control: no-cache`). */
  noCache: boolean;
  /** Ask the model and record nothing (`cache-control: no-store`). */
  noStore: boolean;
  /** Answer only from the cache; 504 on a miss (`cache-control: only-if-cached`). */
  onlyIfCached: boolean;
  namespace: string;
}

const NAMESPACE = /^[A-Za-z0-9._:\-/]{1,128}$/;

/**
 * Reads `cache-control` and `muscle-mem-namespace`; a malformed namespace is a 400. A directive is read by
 * its name, whatever follows it (`no-store="x"`, `no-cache;`, `NO-CACHE`), and an HTTP/1.0 `pragma: no-cache`
 * without a `cache-control` is `no-cache`: a client that asked not to be served from a cache never is.
 */
export function readControls(headers: Headers): CacheControls {
  const cacheControl = headers.get("cache-control") ?? (/(^|,)\s*no-cache\s*(,|$)/i.test(headers.get("pragma") ?? "") ? "no-cache" : "");
  const directives = new Set(
    cacheControl
      .toLowerCase()
      .split(/[,;]/)
      .map((d) => d.split("=")[0].trim())
      .filter(Boolean),
  );
  const namespace = headers.get(NAMESPACE_HEADER) ?? "default";
  if (!NAMESPACE.test(namespace)) {
    throw new ApiError("invalid_request", `${NAMESPACE_HEADER} must be 1-128 characters of A-Z a-z 0-9 . _ : - /`, NAMESPACE_HEADER);
  }
  return {
    noCache: directives.has("no-cache"),
    noStore: directives.has("no-store"),
    onlyIfCached: directives.has("only-if-cached"),
    namespace,
  };
}

/** The answer to `cache-control: only-if-cached` when the tree has nothing to serve. */
export function notCached(): ApiError {
  return new ApiError("not_cached", "No cached answer for this request (cache-control: only-if-cached).");
}
