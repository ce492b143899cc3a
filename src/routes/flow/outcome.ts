/** What the cache did with a request, as `muscle-mem-cache` says to the client. */
export type CacheOutcome = "hit" | "miss" | "bypass";

export const CACHE_HEADER = "muscle-mem-cache";
