export type CacheOutcome = "hit" | "miss" | "bypass";

export const CACHE_HEADER = "muscle-mem-cache";
