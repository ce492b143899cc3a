import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { servicesOf } from "../../src/engine/services";
import { newApp } from "../../src/http/app";
import { ADMIN } from "./api-helpers";
import { bookmarkFor, bookmarkHeader, dbFor, findInShards, readYourWrites, shardNames, shardOf, shards } from "../../src/store/shards/shards";

/** Deterministic 64-hex tree ids. */
async function treeIds(n: number): Promise<string[]> {
  return Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`tree-${i}`));
      return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
    }),
  );
}

describe("shard choice", () => {
  let ids: string[] = [];
  beforeAll(async () => {
    ids = await treeIds(4000);
  });

  it("Should read the binding list from D1_SHARDS, defaulting to DB", () => {
    expect(shardNames(undefined)).toEqual(["DB"]);
    expect(shardNames("")).toEqual(["DB"]);
    expect(shardNames(" DB, DB_1 ,DB_2,DB_1, not-a-binding ")).toEqual(["DB", "DB_1", "DB_2"]);
  });

  it("Should spread trees evenly and not depend on the order of the list", () => {
    const names = ["DB", "DB_1", "DB_2", "DB_3"];
    const counts = new Map<string, number>();
    for (const id of ids) counts.set(shardOf(names, id), (counts.get(shardOf(names, id)) ?? 0) + 1);
    for (const name of names) {
      expect(counts.get(name)).toBeGreaterThan(850);
      expect(counts.get(name)).toBeLessThan(1150);
    }
    const reversed = [...names].reverse();
    expect(ids.every((id) => shardOf(names, id) === shardOf(reversed, id))).toBe(true);
  });

  it("Should move only about 1/N of the trees, all to the new shard, when an Nth shard is added", () => {
    const before = ["DB", "DB_1", "DB_2", "DB_3"];
    const after = [...before, "DB_4"];
    const moved = ids.filter((id) => shardOf(before, id) !== shardOf(after, id));
    expect(moved.length / ids.length).toBeGreaterThan(0.15);
    expect(moved.length / ids.length).toBeLessThan(0.25);
    expect(moved.every((id) => shardOf(after, id) === "DB_4")).toBe(true);
  });
});

describe("shard bindings", () => {
  it("Should resolve DB alone by default and every listed binding otherwise", () => {
    expect(dbFor(env, "abc")).toEqual({ name: "DB", db: env.DB });
    const two = { ...env, D1_SHARDS: "DB,DB_1", DB_1: env.DB } as unknown as Env;
    expect(shards(two).map((s) => s.name)).toEqual(["DB", "DB_1"]);
    const id = "f".repeat(64);
    expect(dbFor(two, id).name).toBe(shardOf(["DB", "DB_1"], id));
  });

  it("Should fail loudly when D1_SHARDS names a binding that does not exist", () => {
    const broken = { ...env, D1_SHARDS: "DB,DB_9" } as unknown as Env;
    expect(() => shards(broken)).toThrow(/DB_9/);
  });
});

describe("the shard set in the isolate's services", () => {
  it("Should bind the configured shards once, the same set the store's own lookups read", () => {
    const two = { ...env, D1_SHARDS: "DB,DB_1", DB_1: env.DB } as unknown as Env;
    const services = servicesOf(two);
    expect(services.shards.map((s) => s.name)).toEqual(["DB", "DB_1"]);
    expect(services.shards).toBe(services.shards);
    expect(shards(two)).toBe(services.shards);
  });

  it("Should throw on each read while a binding is missing (each request fails open), and not before it is read", () => {
    const broken = { ...env, D1_SHARDS: "DB,DB_9" } as unknown as Env;
    const services = servicesOf(broken);
    expect(services.config.shardNames).toEqual(["DB", "DB_9"]);
    expect(() => services.shards).toThrow(/DB_9/);
    expect(() => services.shards).toThrow(/DB_9/);
  });

  it("Should answer each API request that reads the shards with a 500 while a binding is missing, and the next ones the same", async () => {
    const broken = { ...env, D1_SHARDS: "DB,DB_9" } as unknown as Env;
    const app = newApp();
    for (const path of ["/api/requests", "/api/requests"]) {
      const ctx = createExecutionContext();
      const res = await app.fetch(new Request(`https://mm.test${path}`, { headers: { authorization: `Bearer ${ADMIN}` } }), broken, ctx);
      await waitOnExecutionContext(ctx);
      expect(res.status).toBe(500);
    }
  });

  it("Should find a row in whichever shard holds it, from the shard set handed in", async () => {
    await env.DB.exec("CREATE TABLE IF NOT EXISTS shard_find (k TEXT PRIMARY KEY)");
    await env.DB.prepare("INSERT OR IGNORE INTO shard_find (k) VALUES ('here')").run();
    const set = servicesOf({ ...env, D1_SHARDS: "DB" } as unknown as Env).shards;
    const read = (key: string) => (db: D1Database) => db.prepare("SELECT k FROM shard_find WHERE k = ?1").bind(key).first<{ k: string }>();
    expect(await findInShards(set, read("here"))).toEqual({ shard: { name: "DB", db: env.DB }, value: { k: "here" } });
    expect(await findInShards(set, read("elsewhere"))).toBeNull();
  });
});

describe("bookmarks", () => {
  it("Should accept a bookmark only for the shard it came from", () => {
    const header = bookmarkHeader("DB_1", "0000002a-00000001-00004f8e-abc");
    expect(bookmarkFor(header, "DB_1")).toBe("0000002a-00000001-00004f8e-abc");
    expect(bookmarkFor(header, "DB")).toBeNull();
    expect(bookmarkFor("garbage", "DB")).toBeNull();
    expect(bookmarkFor(":x", "DB")).toBeNull();
    expect(bookmarkFor(null, "DB")).toBeNull();
    expect(bookmarkFor(`DB:${"x".repeat(600)}`, "DB")).toBeNull();
  });

  it("Should read a just-written row through a session, and confirm an empty replica read on the primary", async () => {
    await env.DB.prepare("CREATE TABLE IF NOT EXISTS shard_probe (k TEXT PRIMARY KEY, v TEXT)").run();
    const key = crypto.randomUUID();
    await env.DB.prepare("INSERT INTO shard_probe (k, v) VALUES (?1, 'written')").bind(key).run();
    const reads: Array<boolean | undefined> = [];
    // `replica` says what the first read reports about who served it; the rows always come from real D1.
    const read = (k: string, replica: boolean) => async (db: D1DatabaseSession) => {
      const r = await db.prepare("SELECT v FROM shard_probe WHERE k = ?1").bind(k).all<{ v: string }>();
      reads.push(r.meta.served_by_primary);
      return { rows: r.results, servedByPrimary: replica && reads.length === 1 ? false : r.meta.served_by_primary };
    };
    const shard = dbFor(env, key);
    const hit = await readYourWrites(shard, null, read(key, true));
    expect(hit.rows).toEqual([{ v: "written" }]);
    expect(hit.from).toBe("replica");
    expect(reads).toHaveLength(1);

    reads.length = 0;
    const none = await readYourWrites(shard, null, read("absent", true));
    expect(none).toMatchObject({ rows: [], from: "primary" });
    expect(reads).toHaveLength(2);

    // What local D1 reports decides whether a miss costs one read or two.
    reads.length = 0;
    const local = await readYourWrites(shard, null, read("absent", false));
    expect(local.rows).toEqual([]);
    console.log(`local D1 served_by_primary: ${String(reads[0])}; reads for a miss: ${reads.length}`);
  });
});
