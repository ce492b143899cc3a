import type { StoredAnswer } from "../../core/answer";

/**
 * The per-colo layer between an isolate's memory and D1: the Workers Cache
 * API (`caches.default`), shared by every isolate of one Cloudflare colo.
 * It holds recently read answer sets by h_n (a hash that already includes
 * the tenant, namespace and frame), for at most `ttlMs`.
 *
 * The staleness bound: an entry is served at most `COLO_CACHE_TTL_MS` after
 * it was read from D1, so a prune or a new disagreeing observation made in
 * another colo is seen there within that bound (the same colo forgets the
 * entry at once: records, imports and prunes delete it). Only positive reads are
 * kept: a miss always asks D1 again, so a new recording is never hidden.
 */
export interface ColoCache {
  /** COLO_CACHE_TTL_MS: how long an entry is served after its answers were read from the store. */
  readonly ttlMs: number;
  get(key: string): Promise<ColoEntry | undefined>;
  /** Keeps `answers`, read from the store at `readAt` (default now), until `readAt` plus the TTL. */
  put(key: string, answers: StoredAnswer[], readAt?: number): Promise<void>;
  delete(key: string): Promise<void>;
}

/** An entry read from the colo, with the moment it stops being served (ms since the epoch). */
export interface ColoEntry {
  answers: StoredAnswer[];
  expiresAt: number;
  /** When the answers were read from the store (D1 or the tree's object); `expiresAt` is this plus the TTL. */
  readAt: number;
}

/**
 * The Worker's own origin (`https://<its host>`), where the colo layer keys its entries: the Cache API keys
 * on a URL, and a host outside the Worker's zone costs a DNS lookup per operation (Cloudflare's Cache API
 * docs), while the Worker's own host is the zone the cache belongs to. Set from each request
 * (`noteWorkerOrigin`); work without a request in this isolate (an alarm) uses the last one seen, else
 * FALLBACK_ORIGIN.
 */
let workerOrigin = "";
const FALLBACK_ORIGIN = "https://muscle-mem.invalid";

/** Entries live under this path of the Worker's host; no route of the Worker serves it (it is never fetched). */
const PATH = "/__muscle-mem/colo/answers/";

/** Remembers the origin of the request being served (its scheme and host), for the colo layer's keys. */
export function noteWorkerOrigin(url: string): void {
  const end = url.indexOf("/", url.indexOf("//") + 2);
  const origin = end < 0 ? url : url.slice(0, end);
  if (origin !== workerOrigin && /^https?:\/\/[^/?#]+$/.test(origin)) workerOrigin = origin;
}

/** The URL an entry is kept under (`under`: another path of the Worker's host, for the refresh marks of src/engine/lookup/refresh-marks.ts). */
export function coloUrl(key: string, under = PATH): string {
  return `${workerOrigin || FALLBACK_ORIGIN}${under}${encodeURIComponent(key)}`;
}

function requestFor(key: string): Request {
  return new Request(coloUrl(key));
}

function isEntry(value: unknown): value is ColoEntry {
  if (!value || typeof value !== "object") return false;
  const entry = value as { answers?: unknown; expiresAt?: unknown; readAt?: unknown };
  return Array.isArray(entry.answers) && typeof entry.expiresAt === "number" && typeof entry.readAt === "number";
}

/** The colo layer over `cache`, or null when it is off (`ttlMs` 0) or the runtime has no Cache API. */
export function coloCache(ttlMs: number, cache: Cache | undefined = defaultCache()): ColoCache | null {
  if (ttlMs <= 0 || !cache) return null;
  return {
    ttlMs,
    async get(key) {
      const res = await cache.match(requestFor(key));
      if (!res) return undefined;
      const entry: unknown = await res.json();
      // The Cache API keeps whole seconds: the entry's own deadline is the bound that holds.
      if (!isEntry(entry) || entry.expiresAt <= Date.now() || entry.answers.length === 0) return undefined;
      return entry;
    },
    async put(key, answers, readAt = Date.now()) {
      if (answers.length === 0) return;
      const entry: ColoEntry = { answers, expiresAt: readAt + ttlMs, readAt };
      const headers = { "content-type": "application/json", "cache-control": `max-age=${Math.max(1, Math.ceil(ttlMs / 1000))}` };
      await cache.put(requestFor(key), new Response(JSON.stringify(entry), { headers }));
    },
    async delete(key) {
      await cache.delete(requestFor(key));
    },
  };
}

function defaultCache(): Cache | undefined {
  const storage = (globalThis as { caches?: CacheStorage & { default?: Cache } }).caches;
  return storage?.default;
}

/** Colo-layer deletes in flight at once while a write forgets its keys. */
const FORGET_CONCURRENCY = 32;

/** Deletes `keys` from this colo's layer; a failing Cache API is left to the TTL bound (it never fails the write). */
export async function forgetInColo(colo: ColoCache | null, keys: Iterable<string>): Promise<void> {
  if (!colo) return;
  const all = [...new Set(keys)];
  for (let i = 0; i < all.length; i += FORGET_CONCURRENCY) {
    await Promise.all(all.slice(i, i + FORGET_CONCURRENCY).map((key) => colo.delete(key).catch(() => undefined)));
  }
}
