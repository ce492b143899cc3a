import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { backfillDirectory } from "../../src/store/shards/directory-backfill";
import { leastFull } from "../../src/store/shards/placement";
import { shardOf } from "../../src/store/shards/shards";
import { api, learn, newKey, ok, type Tree } from "../worker/api-helpers";
import { uniqueModel } from "../worker/helpers";
import { dbNamed, homeOf, NAMES } from "./shard-helpers";

/** The tree directory over the `sharded` project's four D1 databases: backfill, and lists that read it. */

/** A `trees` row written straight into one shard, as a Worker before the directory (or a stray copy) left it. */
async function plantTree(shard: string, id: string, tenant: string, hits = 0): Promise<void> {
  await dbNamed(shard)
    .prepare(`INSERT INTO trees (id, tenant, namespace, model, frame, created_at, hits) VALUES (?1, ?2, 'legacy', 'm', '{}', ?3, ?4)`)
    .bind(id, tenant, Date.now(), hits)
    .run();
}

function hex(n: number): string {
  return n.toString(16).padStart(32, "0");
}

/** The tenant id the API shows for a key (whoami). */
async function tenantOf(key: string): Promise<string> {
  return (await ok<{ tenant: string }>(api("/whoami", { token: key }))).tenant;
}

describe("the tree directory", () => {
  it("Should pick the shard with the fewest trees, ties by the hash rule", () => {
    expect(
      leastFull(
        new Map([
          ["DB", 3],
          ["DB_1", 1],
          ["DB_2", 2],
        ]),
        hex(1),
      ),
    ).toBe("DB_1");
    const tie = new Map([
      ["DB", 0],
      ["DB_1", 0],
      ["DB_2", 5],
    ]);
    expect(leastFull(tie, hex(7))).toBe(shardOf(["DB", "DB_1"], hex(7)));
  });

  it("Should backfill trees recorded before it in pages, resumably, and find them there", async () => {
    const tenant = "f".repeat(32);
    const legacy = Array.from({ length: 130 }, (_, i) => hex(1000 + i));
    for (const id of legacy) await plantTree(shardOf(NAMES, id), id, tenant);
    // Before the backfill the API finds a legacy tree by the hash rule.
    expect((await api(`/trees/${legacy[0]}`)).status).toBe(200);
    expect(await homeOf(legacy[0])).toBeUndefined();
    const first = await backfillDirectory(env, 1);
    expect(first.done).toBe(false);
    let total = first.inserted;
    for (let i = 0; i < 10; i++) {
      const next = await backfillDirectory(env, 1);
      total += next.inserted;
      if (next.done) break;
    }
    expect(total).toBe(legacy.length);
    for (const id of legacy) expect(await homeOf(id)).toBe(shardOf(NAMES, id));
    expect(await backfillDirectory(env)).toEqual({ inserted: 0, done: true });
  });

  it("Should list and count a tenant's trees from the shards the directory names, each tree once", async () => {
    await backfillDirectory(env);
    const key = newKey();
    await learn({ model: uniqueModel("dir"), messages: [{ role: "user", content: "hello" }] }, key, { "muscle-mem-namespace": "dir-1" });
    const tenant = await tenantOf(key);
    const listed = await ok<{ data: Tree[] }>(api("/trees", { token: key }));
    expect(listed.data).toHaveLength(1);
    const tree = listed.data[0];
    const home = (await homeOf(tree.id)) ?? "";
    const elsewhere = NAMES.filter((n) => n !== home);
    // A stray copy of the tree's row (a move's copy, or a source not yet drained) and a row no directory names.
    await plantTree(elsewhere[0], tree.id, tenant, 1000);
    await plantTree(elsewhere[1], hex(77), tenant, 1000);
    const after = await ok<{ data: Tree[] }>(api("/trees", { token: key }));
    expect(after.data.map((t) => t.id)).toEqual([tree.id]);
    const stats = await ok<{ overall: { trees: number; hits: number } }>(api("/stats", { token: key }));
    expect(stats.overall.trees).toBe(1);
    expect(stats.overall.hits).toBeLessThan(1000);
  });
});
