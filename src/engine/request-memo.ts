import type { KeyOutcome, ProviderAdapter, ProviderKey } from "../cache/provider";
import { BoundedMemo } from "../core/memo";
import type { Config } from "../config";

/**
 * What parsing and keying made of one exact request: its validated body, its keying outcome (a lossy
 * body's bypass included), and every header keying read, with the value it read.
 */
export interface MemoEntry<B, K extends ProviderKey> {
  body: B;
  keyed: KeyOutcome<K>;
  reads: ReadonlyArray<readonly [string, string | null]>;
}

/**
 * The memo's budget per Worker config and adapter, in weight units: an entry weighs three times its
 * body text's characters (the text once, its parsed body about twice), so it holds about 8 M characters of
 * request text, some 400 requests of 20 KB, and at most ~30 MB of the isolate's 128 MB beside the
 * 16 MB of answers (HOT_MAX_BYTES). The oldest entries go first.
 */
export const REQUEST_MEMO_MAX_CHARS = 24_000_000;

/** An entry's weight per character of its body text (see REQUEST_MEMO_MAX_CHARS). */
const WEIGHT_PER_CHAR = 3;

/** Where a request is found: its body text, then (tenant, namespace, URL) among the requests with that text. */
export interface MemoKey {
  raw: string;
  scope: string;
}

/** The entries of one body text, by scope, and their weight (WEIGHT_PER_CHAR per character of the text). */
interface Stored {
  byScope: Map<string, MemoEntry<unknown, ProviderKey>>;
  size: number;
}

/** Scopes (tenants, namespaces, URLs) kept per body text, at most. */
const MAX_SCOPES = 16;

const memos = new WeakMap<Config, WeakMap<object, BoundedMemo<Stored>>>();

/**
 * The request memo: a repeated request (an agent's step, a retry, every hit)
 * is parsed, validated and keyed once per isolate, not on every arrival.
 *
 * An entry is found by everything keying reads besides headers: the adapter,
 * the exact body text, and the tenant, namespace and full URL (path and
 * query), under one Worker config. The text is the outer key as it arrived
 * (a joined 20 KB key would be copied on every lookup). The headers keying read (through
 * `recordingHeaders`) are stored with their values, and the entry serves only
 * a request with the same values for every one of them; keying that looked at
 * the whole header set is never memoised. So the memo can only skip work that
 * would give the same result: a memo miss is merely slower.
 *
 * The memoised body and key are frozen: no later step may change what
 * another request will be served from.
 */
export class RequestMemo<B, K extends ProviderKey> {
  constructor(private readonly memo: BoundedMemo<Stored>) {}

  static of<B, K extends ProviderKey, A>(config: Config, adapter: ProviderAdapter<B, K, A>): RequestMemo<B, K> {
    let byAdapter = memos.get(config);
    if (!byAdapter) memos.set(config, (byAdapter = new WeakMap()));
    let memo = byAdapter.get(adapter);
    if (!memo) byAdapter.set(adapter, (memo = new BoundedMemo<Stored>(REQUEST_MEMO_MAX_CHARS, (s) => s.size)));
    return new RequestMemo<B, K>(memo);
  }

  /** The entry for this request, when one was kept and every header it read has the same value now. */
  get(key: MemoKey, headers: Headers): MemoEntry<B, K> | undefined {
    const entry = this.memo.get(key.raw)?.byScope.get(key.scope);
    if (!entry || !entry.reads.every(([name, value]) => headers.get(name) === value)) return undefined;
    // SAFETY: the memo is per adapter (RequestMemo.of), whose entries are MemoEntry<B, K>.
    return entry as MemoEntry<B, K>;
  }

  /** Keeps an entry (frozen), unless keying read the whole header set or the outcome was bad input. */
  set(key: MemoKey, entry: MemoEntry<B, K>, readAll: boolean): void {
    if (readAll || ("invalid" in entry.keyed && !entry.keyed.ok)) return;
    const frozen = deepFreeze(entry);
    const stored = this.memo.get(key.raw);
    if (stored) {
      if (stored.byScope.size < MAX_SCOPES || stored.byScope.has(key.scope)) stored.byScope.set(key.scope, frozen);
      return;
    }
    // BoundedMemo counts the text's own characters once; the rest of the weight stands for the parsed body.
    this.memo.set(key.raw, { byScope: new Map([[key.scope, frozen]]), size: (WEIGHT_PER_CHAR - 1) * key.raw.length });
  }
}

/** The memo's key of a request: the keying inputs other than headers (tenants are hashes, namespaces and URLs hold no newline). */
export function requestMemoKey(tenant: string, namespace: string, url: URL, raw: string): MemoKey {
  return { raw, scope: `${tenant}\n${namespace}\n${url.href}` };
}

/**
 * `headers` as keying sees them, with each `get`/`has` noted in `reads`
 * (lower-cased name, value); any other use (iteration) sets `all.read`.
 */
export function recordingHeaders(headers: Headers, reads: Map<string, string | null>, all: { read: boolean }): Headers {
  const note = (name: string) => {
    const value = headers.get(name);
    reads.set(name.toLowerCase(), value);
    return value;
  };
  return new Proxy(headers, {
    get(target, prop) {
      if (prop === "get") return note;
      if (prop === "has") return (name: string) => note(name) !== null;
      all.read = true;
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** Freezes `value` and everything it holds (plain data: objects and arrays). */
export function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== "object" || Object.isFrozen(value)) return value;
  Object.freeze(value);
  // Indexed and keyed loops rather than Object.values: no array of values per object of a 20 KB body.
  if (Array.isArray(value)) for (let i = 0; i < value.length; i++) deepFreeze(value[i]);
  else {
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) deepFreeze(record[key]);
  }
  return value;
}
