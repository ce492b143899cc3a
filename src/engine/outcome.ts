/** What the cache did with a request, as `muscle-mem-cache` says to the client. */
export type CacheOutcome = "hit" | "miss" | "bypass";

export { CACHE_HEADER } from "../core/protocol";
