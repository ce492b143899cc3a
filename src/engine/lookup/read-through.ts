import type { StoredAnswer } from "../../core/answer";
import { choose, type ServePolicy } from "../../cache/policy";
import type { Config } from "../../config";
import { queryAnswers, readAnswers, readAnswersAt, servedAnswers } from "../../store/tree/answers";
import { probedAnswersStatement, probedFrom, type PathProbe } from "../../store/tree/divergence";
import { BOOKMARK_HEADER, bookmarkFor, bookmarkHeader, readSession, readYourWrites, type Shard } from "../../store/shards/shards";
import { shardFor } from "../../store/shards/directory";
import type { HotCache } from "./isolate-cache";
import { coloCache, type ColoCache, type ColoEntry } from "./colo-cache";
import { noteColo } from "../../observability/store-meter";
import { logEvent } from "../../observability/log-event";
import { withTimeout } from "../../core/deadline";
import type { Joined } from "../../store/objects/single-flight";
import { lookUpFar, type FarLookup } from "./object-lookup";
import { keepRead } from "./remember-read";
import { REFRESH_AT, refreshAhead, refreshDue } from "./refresh-ahead";
import { refreshMarks } from "./refresh-marks";

/**
 * A lookup's outcome. A miss that went to the tree's object carries the
 * single-flight claim taken in the same call (`joined`; without one the
 * caller claims itself) and whether the tree has live learned templates
 * (`templates`; false: no template lookup is needed).
 */
export type Lookup =
  | { status: "hit"; answer: StoredAnswer; bookmark: string | null }
  | { status: "miss"; bookmark: string | null; joined?: Joined; templates?: boolean; recorded: number; probe?: PathProbe | null }
  | { status: "failed"; error: unknown };

export { withTimeout } from "../../core/deadline";

/** Where a lookup reads: the tree's shard and the client's D1 bookmark for it (`muscle-mem-d1-bookmark`). */
export interface LookupSource {
  shard: Shard;
  bookmark: string | null;
  /** D1_READ_REPLICATION: read through a session (replicas), else the database itself. */
  replicas: boolean;
  /** The per-colo layer (Cache API) between isolate memory and D1, or null when COLO_CACHE_TTL_MS is 0. */
  colo: ColoCache | null;
  /** Runs work after the response (ctx.waitUntil); without it, a colo write is awaited. */
  defer?: (work: Promise<unknown>) => void;
}

/**
 * The tree's shard and the client's bookmark for it; null (and an error log)
 * when D1_SHARDS names a binding this Worker lacks, so the caller fails open.
 */
export async function lookupSource(
  env: Env,
  config: Config,
  treeId: string,
  headers: Headers,
  defer?: (work: Promise<unknown>) => void,
): Promise<LookupSource | null> {
  try {
    const shard = await shardFor(env, treeId, { timeoutMs: config.directoryTimeoutMs, defer });
    const replicas = config.readReplication;
    // A client that sends a bookmark asks for reads at least that fresh: the colo layer cannot promise it.
    const bookmark = replicas ? bookmarkFor(headers.get(BOOKMARK_HEADER), shard.name) : null;
    return { shard, bookmark, replicas, colo: bookmark ? null : coloCache(config.coloCacheTtlMs), defer };
  } catch (error) {
    logEvent("error", "shard_config_error", { error: String(error) });
    return null;
  }
}

/**
 * The exact lookup: the answers at h_n from isolate memory, this colo's Cache
 * API layer, or, cold, one indexed D1 query from the Worker itself (through a
 * session of the tree's shard with read replication: a near replica). Then
 * the serving policy. With `far`, a cold read that finds nothing to serve goes
 * on to the tree's object (TreeWriter.lookupOrJoin), which joins single flight
 * in the same call: the writer sees a tree's misses, never its hits
 * (docs/performance.md, "A hot tree"). When the Worker read the primary (no
 * read replication) the object takes that read as its own unless the shard
 * is not the tree's home or it recorded at `key` since; otherwise it reads
 * the primary again. A stale replica can only make a miss (the object's read
 * on the primary then finds the answer): the answers are read at `key` and
 * served for `key` alone. Without
 * `far`, a replica read that has nothing is confirmed on the primary and the
 * caller claims after. Never throws: a failing store is reported as `failed`,
 * and the caller fails open. A D1 session read returns its bookmark, for the
 * client to send back.
 */
export async function lookupAnswer(source: LookupSource, hot: HotCache, key: string, policy: ServePolicy, timeoutMs: number, far?: FarLookup): Promise<Lookup> {
  const inMemory = hot.entry(key);
  let answers = inMemory?.answers;
  let bookmark: string | null = null;
  let cachedReadAt = inMemory?.readAt;
  if (!answers) {
    const fromColo = await readColo(source.colo, key, timeoutMs);
    if (fromColo) {
      answers = fromColo.answers;
      cachedReadAt = fromColo.readAt;
      hot.set(key, answers, Date.now(), fromColo.expiresAt, fromColo.readAt);
    } else {
      const readAt = Date.now();
      try {
        // With `far`, the object reads the probed query on a miss; the Worker's read is the plain one, on a replica alone.
        const read = await withTimeout(far ? readNear(source, key, far) : readFrom(source, key), timeoutMs, "D1 lookup");
        if (far && choose(read.rows, policy) === null) return lookupFar(source, hot, key, policy, timeoutMs, far, { ...read, readAt });
        answers = read.rows;
        bookmark = read.bookmark;
      } catch (error) {
        return { status: "failed", error };
      }
      await keepRead(hot, source.colo, key, answers, readAt, source.defer);
    }
  }
  const chosen = choose(answers, policy);
  if (chosen === null) return { status: "miss", bookmark, recorded: answers.length };
  // A hit from memory or the colo whose answers near the staleness bound: read them again after the response.
  const boundMs = source.colo?.ttlMs ?? hot.ttlMs;
  if (cachedReadAt !== undefined && source.defer && refreshDue(cachedReadAt, boundMs)) {
    // A refresh reads D1 from the Worker too, never the tree's object: one batch per shard (and bookmark).
    const read = (keys: string[]) => readEach(source, keys, timeoutMs);
    const marks = source.colo ? refreshMarks(Math.ceil(boundMs * REFRESH_AT)) : null;
    refreshAhead({ hot, colo: source.colo, boundMs, batch: `d1:${source.shard.name}:${source.bookmark ?? ""}`, read, defer: source.defer, marks }, key);
  }
  return { status: "hit", answer: answers[chosen], bookmark };
}

/**
 * A cold lookup that found nothing to serve in D1, through the tree's object:
 * its read on the primary (or, after the Worker's own read there, none) and
 * the single-flight join in one call. A hit (a replica behind, another shard,
 * or a record that landed since the Worker's read) is kept in
 * the isolate and the colo layer as a D1 read would be; a miss is not.
 */
async function lookupFar(
  source: LookupSource,
  hot: HotCache,
  key: string,
  policy: ServePolicy,
  timeoutMs: number,
  far: FarLookup,
  /** The Worker's own read: its answers, its probe (on the primary), its bookmark (a replica session, handed back on a miss), when it began. */
  own: NearRead & { readAt: number },
): Promise<Lookup> {
  try {
    const readAt = Date.now();
    // A read on the tree's primary (no read replication): the object may join without reading again (lookup-or-join.ts).
    const primary = source.replicas ? undefined : { shard: source.shard.name, readAt: own.readAt };
    const found = await lookUpFar(far, { key, policy, timeoutMs }, primary);
    if (found.status === "miss") {
      const seen = found.reread ? { answers: found.answers, probe: found.probe } : { answers: own.rows, probe: own.probe };
      const probe = seen.probe !== undefined ? { probe: seen.probe } : {};
      return {
        status: "miss",
        bookmark: own.bookmark,
        templates: found.templates,
        recorded: seen.answers.length,
        ...probe,
        ...(found.joined ? { joined: found.joined } : {}),
      };
    }
    await keepRead(hot, source.colo, key, found.answers, readAt, source.defer);
    return { status: "hit", answer: found.answers[found.chosen], bookmark: null };
  } catch (error) {
    return { status: "failed", error };
  }
}

/** The colo layer's entry for `key`; a failing or slow Cache API is a colo miss, never an error. */
async function readColo(colo: ColoCache | null, key: string, timeoutMs: number): Promise<ColoEntry | undefined> {
  if (!colo) return undefined;
  const started = Date.now();
  try {
    const entry = await withTimeout(colo.get(key), timeoutMs, "colo cache read");
    noteColo(entry ? "hit" : "miss", Date.now() - started);
    return entry;
  } catch {
    noteColo("miss", Date.now() - started);
    return undefined;
  }
}

/** One indexed read of the answers at `key`: from the shard itself, or through a replica session with read-your-writes. */
async function readFrom(source: LookupSource, key: string): Promise<{ rows: StoredAnswer[]; bookmark: string | null }> {
  if (!source.replicas) return readAnswers(source.shard.db, key).then((rows) => ({ rows, bookmark: null }));
  return readYourWrites(source.shard, source.bookmark, async (db) => {
    const r = await queryAnswers(db, key);
    return { rows: r.answers, servedByPrimary: r.servedByPrimary };
  });
}

/** The Worker's cold read when the tree's object stands behind it; `probe` only from a probed read of the primary. */
interface NearRead {
  rows: StoredAnswer[];
  bookmark: string | null;
  probe?: PathProbe | null;
}

/**
 * The Worker's cold read when the tree's object stands behind it: one indexed read of the answers at `key`,
 * from the shard or one replica session (no confirmation on the primary: a miss goes to the object, which reads there).
 * On the shard itself with the request's path, the probed query (the same statement: on a miss it also says how
 * deep the path is recorded), since the object may then take this read as its own.
 */
async function readNear(source: LookupSource, key: string, far: FarLookup): Promise<NearRead> {
  if (!source.replicas) {
    const path = far.path;
    if (!path) return { rows: await readAnswers(source.shard.db, key), bookmark: null };
    const read = probedFrom(await probedAnswersStatement(source.shard.db, key, far.treeId, path).all());
    return { rows: servedAnswers(read.rows), bookmark: null, probe: read.probe };
  }
  const session = readSession(source.shard, source.bookmark);
  const rows = await readAnswers(session, key);
  return { rows, bookmark: session.getBookmark() };
}

/**
 * A refresh's read: without read replication, every key in one D1 batch on the shard (readAnswersAt);
 * with it, each key's indexed read through a replica session, side by side.
 */
async function readEach(source: LookupSource, keys: string[], timeoutMs: number): Promise<Map<string, StoredAnswer[]>> {
  if (!source.replicas) return withTimeout(readAnswersAt(source.shard.db, keys), timeoutMs, "D1 refresh");
  const reads = await Promise.all(keys.map(async (key) => [key, (await withTimeout(readFrom(source, key), timeoutMs, "D1 refresh")).rows] as const));
  return new Map(reads);
}

/** The `muscle-mem-d1-bookmark` header of a hit read from D1, so that the client's next read is at least as fresh (none from memory). */
export function bookmarkHeaders(source: LookupSource, lookup: Lookup): Record<string, string> {
  return lookup.status !== "failed" && lookup.bookmark ? { [BOOKMARK_HEADER]: bookmarkHeader(source.shard.name, lookup.bookmark) } : {};
}
