import { coloUrl } from "./colo-cache";

/**
 * One refresh per key per colo per interval: before an isolate reads a due
 * key again, it looks for this colo's mark of the key in the Cache API (the
 * colo layer's own host, another path) and leaves one of its own when there is
 * none. An isolate that finds a live mark skips the key: another isolate of
 * this colo is reading it, and its answers reach the colo layer, where the next
 * due hit here takes them (src/engine/lookup/refresh-ahead.ts). Without the
 * marks, every isolate of a colo that served a due hit refreshed it through
 * the store itself.
 *
 * The Cache API has no put-if-absent: two isolates that look in the same
 * instant may both read (a duplicate read, never a wrong answer). A failing
 * Cache API counts as no mark (the key is read: a refresh is always safe).
 * A mark's own deadline is the bound that holds (the Cache API keeps whole
 * seconds), against the clock handed in.
 */
export interface RefreshMarks {
  /** How long a mark holds: the refresh interval. */
  readonly intervalMs: number;
  /** The keys among `keys` no isolate of this colo marked within the interval; each is marked now for this isolate. */
  claim(keys: readonly string[], now?: number): Promise<string[]>;
}

/** Marks live under this path of the Worker's host (never fetched: no route serves it). */
const PATH = "/__muscle-mem/colo/refreshing/";

/** The colo's refresh marks over `cache`, or null when the interval is 0 or the runtime has no Cache API. */
export function refreshMarks(intervalMs: number, cache: Cache | undefined = defaultCache()): RefreshMarks | null {
  if (intervalMs <= 0 || !cache) return null;
  const requestFor = (key: string) => new Request(coloUrl(key, PATH));
  const marked = async (key: string, now: number): Promise<boolean> => {
    const res = await cache.match(requestFor(key));
    if (!res) return false;
    const mark: unknown = await res.json();
    return typeof mark === "object" && mark !== null && "until" in mark && typeof mark.until === "number" && mark.until > now;
  };
  const mark = (key: string, now: number): Promise<void> => {
    const headers = { "content-type": "application/json", "cache-control": `max-age=${Math.max(1, Math.ceil(intervalMs / 1000))}` };
    return cache.put(requestFor(key), new Response(JSON.stringify({ until: now + intervalMs }), { headers }));
  };
  return {
    intervalMs,
    async claim(keys, now = Date.now()) {
      const free = await Promise.all(
        keys.map(async (key) => {
          if (await marked(key, now).catch(() => false)) return null;
          await mark(key, now).catch(() => undefined);
          return key;
        }),
      );
      return free.filter((key): key is string => key !== null);
    },
  };
}

function defaultCache(): Cache | undefined {
  const storage = (globalThis as { caches?: CacheStorage & { default?: Cache } }).caches;
  return storage?.default;
}
