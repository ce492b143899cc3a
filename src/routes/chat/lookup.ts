import type { StoredAnswer } from "../../cache/answer";
import { choose, type ServePolicy } from "../../cache/policy";
import { configOf } from "../../config";
import { queryAnswers, readAnswers } from "../../store/answers";
import { BOOKMARK_HEADER, bookmarkFor, bookmarkHeader, dbFor, readYourWrites, type Shard } from "../../store/shards";
import type { HotCache } from "../../store/hot-cache";

export type Lookup = { status: "hit"; answer: StoredAnswer; bookmark: string | null } | { status: "miss"; bookmark: string | null } | { status: "failed"; error: unknown };

/** Rejects after `ms`, so that a slow store can never hold an agent back. */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Where a lookup reads: the tree's shard and the client's D1 bookmark for it (`muscle-mem-d1-bookmark`). */
export interface LookupSource {
  shard: Shard;
  bookmark: string | null;
  /** D1_READ_REPLICATION: read through a session (replicas), else the database itself. */
  replicas: boolean;
}

/**
 * The tree's shard and the client's bookmark for it; null (and an error log)
 * when D1_SHARDS names a binding this Worker lacks, so the caller fails open.
 */
export function lookupSource(env: Env, treeId: string, headers: Headers): LookupSource | null {
  try {
    const shard = dbFor(env, treeId);
    const replicas = configOf(env).readReplication;
    return { shard, bookmark: replicas ? bookmarkFor(headers.get(BOOKMARK_HEADER), shard.name) : null, replicas };
  } catch (error) {
    console.error(JSON.stringify({ event: "shard_config_error", error: String(error) }));
    return null;
  }
}

/**
 * The exact lookup: the answers at h_n from isolate memory or one indexed D1
 * query through a read-replica session of the tree's shard (confirmed on the
 * primary when a replica has nothing), then the serving policy. Never throws:
 * a failing store is reported as `failed`, and the caller fails open. A D1
 * read returns the session's bookmark, for the client to send back.
 */
export async function lookupAnswer(source: LookupSource, hot: HotCache, key: string, policy: ServePolicy, timeoutMs: number): Promise<Lookup> {
  let answers = hot.get(key);
  let bookmark: string | null = null;
  if (!answers) {
    try {
      const read = await withTimeout(readFrom(source, key), timeoutMs, "D1 lookup");
      answers = read.rows;
      bookmark = read.bookmark;
    } catch (error) {
      return { status: "failed", error };
    }
    hot.set(key, answers);
  }
  const chosen = choose(answers, policy);
  return chosen === null ? { status: "miss", bookmark } : { status: "hit", answer: answers[chosen], bookmark };
}

/** One indexed read of the answers at `key`: from the shard itself, or through a replica session with read-your-writes. */
function readFrom(source: LookupSource, key: string): Promise<{ rows: StoredAnswer[]; bookmark: string | null }> {
  if (!source.replicas) return readAnswers(source.shard.db, key).then((rows) => ({ rows, bookmark: null }));
  return readYourWrites(source.shard, source.bookmark, async (db) => {
    const r = await queryAnswers(db, key);
    return { rows: r.answers, servedByPrimary: r.servedByPrimary };
  });
}

/** The `muscle-mem-d1-bookmark` header of a hit read from D1, so that the client's next read is at least as fresh (none from memory). */
export function bookmarkHeaders(source: LookupSource, lookup: Lookup): Record<string, string> {
  return lookup.status !== "failed" && lookup.bookmark ? { [BOOKMARK_HEADER]: bookmarkHeader(source.shard.name, lookup.bookmark) } : {};
}
