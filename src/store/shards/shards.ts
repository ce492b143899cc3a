/**
 * Trees spread over several D1 databases, and D1 read replicas for hits.
 *
 * - **Shards.** `D1_SHARDS` lists the D1 bindings that hold trees
 *   (`"DB,DB_1,DB_2"`, default `"DB"`; parsed in src/config.ts by src/core/shard-vars.ts' rule, bound
 *   once per isolate as `Services.shards`). A tree lives in exactly one of them.
 *   Which one is the tree directory's answer (src/store/shards/directory.ts:
 *   `shardFor` for reads, the writer's TreeHome for writes); new trees go to
 *   the least-full shard and trees can move. The hash rule here (`shardOf`,
 *   rendezvous hashing of the tree id) is where trees recorded before the
 *   directory were put, and the directory's fallback for trees with no row.
 * - **Sessions.** Hit reads go through `withSession(bookmark)`, so that D1 may
 *   answer from a nearby read replica. The bookmark a client sends back
 *   (`muscle-mem-d1-bookmark`) keeps its reads monotonic; a miss on a replica
 *   is confirmed on the primary before the request goes to the model, so an
 *   agent never misses an answer that has been recorded (read-your-writes).
 */

import { readShardNames } from "../../core/shard-vars";

/** The response/request header that carries a D1 bookmark: `<binding>:<bookmark>`. */
export { BOOKMARK_HEADER } from "../../core/protocol";

/** A shard: its binding name and the database. */
export interface Shard {
  name: string;
  db: D1Database;
}

/** D1_SHARDS' rule lives in core (src/core/shard-vars.ts), where src/config.ts reads it too. */
export { expand, MAX_RANGE } from "../../core/shard-vars";

/**
 * The shard binding names from `D1_SHARDS` (comma separated, deduplicated, ranges `DB_1..DB_400` expanded),
 * or `["DB"]`; a malformed item is left out (src/config.ts logs it). The same rule as `Config.shardNames`.
 */
export function shardNames(value: string | undefined): string[] {
  return readShardNames(value).names;
}

/** 32-bit FNV-1a of a string: cheap, stable across isolates and releases. */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  // A final avalanche so that names differing in one character spread well.
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b) >>> 0;
  h ^= h >>> 13;
  return h >>> 0;
}

/**
 * Which of `names` holds `treeId` (rendezvous hashing: highest score wins,
 * ties broken by name). Pure, for tests and for planning a re-shard.
 *
 * @example shardOf(["DB", "DB_1"], treeId) // "DB_1"
 */
export function shardOf(names: readonly string[], treeId: string): string {
  let best = names[0];
  let bestScore = -1;
  for (const name of names) {
    const score = fnv1a(`${name}\u0000${treeId}`);
    if (score > bestScore || (score === bestScore && name < best)) {
      best = name;
      bestScore = score;
    }
  }
  return best;
}

type Bindings = Record<string, unknown>;

function isD1(value: unknown): value is D1Database {
  return typeof value === "object" && value !== null && typeof (value as { prepare?: unknown }).prepare === "function";
}

/** The shard list per env object (one per isolate): bound once, off the hot path. */
const resolved = new WeakMap<object, Shard[]>();

/**
 * The shards `names` lists (`Config.shardNames`), each with its D1 binding in `env`: bound once per env
 * (`Services.shards`, src/engine/services.ts). `names` must be env's own D1_SHARDS read by the config's rule:
 * the first set bound for an env is the one `shards(env)` answers after. Throws, each time it is asked, while a name is not a D1
 * binding of this Worker, so that each request fails open rather than the isolate failing for good.
 */
export function bindShards(env: Env, names: readonly string[]): Shard[] {
  const known = resolved.get(env);
  if (known) return known;
  const vars = env as unknown as Bindings;
  const all = names.map((name) => {
    const db = vars[name];
    if (!isD1(db)) throw new Error(`D1_SHARDS names '${name}', which is not a D1 binding of this Worker`);
    return { name, db };
  });
  resolved.set(env, all);
  return all;
}

/**
 * Every configured shard that is bound, for the store's reads that start from `env` alone (the directory,
 * the Durable Objects): `D1_SHARDS` read by the same rule as the config's; throws as `bindShards` does.
 */
export function shards(env: Env): Shard[] {
  return resolved.get(env) ?? bindShards(env, shardNames((env as unknown as Bindings).D1_SHARDS as string | undefined));
}

/**
 * The shard the hash rule names for `treeId`: where trees recorded before the
 * tree directory live. Not where a tree is now: ask `shardFor` (src/store/shards/directory.ts).
 */
export function dbFor(env: Env, treeId: string): Shard {
  const all = shards(env);
  if (all.length === 1) return all[0];
  const name = shardOf(
    all.map((s) => s.name),
    treeId,
  );
  return all.find((s) => s.name === name) ?? all[0];
}

/** Every shard's database, for reads that span trees (lists, stats, the scheduled prune). */
export function databasesOf(all: readonly Shard[]): D1Database[] {
  return all.map((s) => s.db);
}

/**
 * Runs `read` on every shard at once and returns the first non-null result,
 * with its shard. For the few reads that start from a node hash, which does not
 * name its tree (the node and path API, pruning a node).
 */
export async function findInShards<T>(all: readonly Shard[], read: (db: D1Database) => Promise<T | null>): Promise<{ shard: Shard; value: T } | null> {
  const found = await Promise.all(all.map(async (shard) => ({ shard, value: await read(shard.db) })));
  for (const f of found) if (f.value !== null) return { shard: f.shard, value: f.value };
  return null;
}

/** Parses `<binding>:<bookmark>` from the client; null when absent, malformed or for another shard. */
export function bookmarkFor(header: string | null | undefined, shard: string): string | null {
  if (!header) return null;
  const at = header.indexOf(":");
  if (at <= 0 || header.length > 512) return null;
  const name = header.slice(0, at);
  const bookmark = header.slice(at + 1).trim();
  return name === shard && bookmark.length > 0 ? bookmark : null;
}

/** The header value for a shard's bookmark. */
export function bookmarkHeader(shard: string, bookmark: string): string {
  return `${shard}:${bookmark}`;
}

/** A read session for hits: as fresh as the client's bookmark, else any replica. */
export function readSession(shard: Shard, clientBookmark: string | null): D1DatabaseSession {
  return shard.db.withSession(clientBookmark ?? "first-unconstrained");
}

/** One read through a session: its rows and whether D1 says the primary served it. */
export interface SessionRead<T> {
  rows: T[];
  servedByPrimary: boolean | undefined;
}

/**
 * Reads through a replica session and, when the replica has nothing and was
 * not the primary, confirms on the primary (`first-primary`), so that a
 * just-recorded answer is never missed. Returns the rows and the newest
 * bookmark seen. Without read replication every read is served by the
 * primary and no second read happens.
 */
export async function readYourWrites<T>(
  shard: Shard,
  clientBookmark: string | null,
  read: (db: D1DatabaseSession) => Promise<SessionRead<T>>,
): Promise<{ rows: T[]; bookmark: string | null; from: "replica" | "primary" }> {
  const replica = readSession(shard, clientBookmark);
  const first = await read(replica);
  if (first.rows.length > 0) return { rows: first.rows, bookmark: replica.getBookmark(), from: first.servedByPrimary === true ? "primary" : "replica" };
  if (first.servedByPrimary === true) return { rows: first.rows, bookmark: replica.getBookmark(), from: "primary" };
  const primary = shard.db.withSession("first-primary");
  const confirmed = await read(primary);
  return { rows: confirmed.rows, bookmark: primary.getBookmark() ?? replica.getBookmark(), from: "primary" };
}
