import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { Counters } from "../../src/engine/counting/isolate-counters";
import { emptyTally, type TallyBatch } from "../../src/store/tree/tally-batch";
import { eventually } from "./helpers";
import { seedNodes, seedTree } from "./tally.support";
import { recentRequest } from "../support/recent-request";
import { HitTally, MAX_PENDING_NODES, PAGE_ROWS } from "../../src/store/objects/hit-tally";
import { tallyPages } from "../../src/store/tree/tally-pages";
import { tallyRows } from "../../src/store/tree/tally-batch";

async function nodeHits(hash: string): Promise<number> {
  const row = await env.DB.prepare("SELECT hits FROM nodes WHERE hash = ?1").bind(hash).first<{ hits: number }>();
  return row?.hits ?? -1;
}

async function treeHits(id: string): Promise<number> {
  const row = await env.DB.prepare("SELECT hits FROM trees WHERE id = ?1").bind(id).first<{ hits: number }>();
  return row?.hits ?? -1;
}

/** What one isolate's flush sends for `hits` hits on `node`. */
function isolateFlush(treeId: string, node: string, hits: number, at: number): TallyBatch {
  const counters = new Counters();
  for (let i = 0; i < hits; i++) {
    counters.hit(treeId, node, { promptTokens: 10, completionTokens: 5, latencyMs: 100 }, at);
    counters.request(recentRequest({ at, tree_id: treeId, latency_ms: 2, prompt_tokens: 10, completion_tokens: 5, node }));
  }
  const [tally] = counters.drain();
  return tally;
}

describe("hit tally: hit counts reach D1 through each tree's object", () => {
  it("Should write the counts of many isolates' flushes in one D1 write per interval, summed", async () => {
    const { treeId, node } = await seedTree();
    const tally = env.HIT_TALLY.get(env.HIT_TALLY.idFromName(treeId));
    // Three isolates flush within one interval: nothing reaches D1 until the object's alarm.
    await tally.add(isolateFlush(treeId, node, 2, 1000), 600);
    await tally.add(isolateFlush(treeId, node, 3, 3000), 600);
    await tally.add(isolateFlush(treeId, node, 1, 2000), 600);
    expect(await nodeHits(node)).toBe(0);
    expect(await treeHits(treeId)).toBe(0);
    expect(await tally.pendingRows()).toBe(3);
    await eventually(async () => (await nodeHits(node)) === 6, 10_000);
    expect(await treeHits(treeId)).toBe(6);
    // The six hits' recent-requests rows were gathered into one row (not one per hit): the D1 rows hits write grow with the trees hit.
    const recent = await env.DB.prepare("SELECT count, at, prompt_tokens AS p, node_hash AS node FROM recent_requests WHERE tree_id = ?1").bind(treeId).all();
    expect(recent.results).toEqual([{ count: 6, at: 3000, p: 60, node }]);
    const row = await env.DB.prepare("SELECT last_hit_at AS at FROM nodes WHERE hash = ?1").bind(node).first<{ at: number }>();
    expect(row?.at).toBe(3000);
    expect(await tally.pendingRows()).toBe(0);
  });

  it("Should write at once with interval 0, and count template hits and bypasses", async () => {
    const { treeId, node } = await seedTree();
    const batch = emptyTally(treeId);
    batch.tree = { hits: 1, bypasses: 4, promptTokens: 1, completionTokens: 1, latencyMs: 1, lastHitAt: 5 };
    batch.nodes[node] = { hits: 1, lastHitAt: 5 };
    await env.HIT_TALLY.get(env.HIT_TALLY.idFromName(treeId)).add(batch, 0);
    expect(await nodeHits(node)).toBe(1);
    const row = await env.DB.prepare("SELECT bypasses FROM trees WHERE id = ?1").bind(treeId).first<{ bypasses: number }>();
    expect(row?.bypasses).toBe(4);
  });

  it("Should drain an isolate's counters a budget of rows at a time, every count once", () => {
    const counters = new Counters();
    for (let i = 0; i < 30; i++) counters.hit("t", `n-${i}`, { promptTokens: 1, completionTokens: 1, latencyMs: 1 });
    counters.templateHit("t", "tpl");
    expect(counters.pending()).toBe(32);
    const first = counters.drain(10);
    expect(first.map((t) => Object.keys(t.nodes).length)).toEqual([9]);
    expect(first[0].tree?.hits).toBe(30);
    expect(counters.pending()).toBe(22);
    const rest = [counters.drain(10), counters.drain(10), counters.drain(10)].flat();
    expect(counters.pending()).toBe(0);
    expect(rest.reduce((n, t) => n + Object.keys(t.nodes).length, 0)).toBe(21);
    expect(rest.some((t) => t.templates.tpl === 1)).toBe(true);
  });
});

describe("hit tally: bounded, paged, and sparing with its own storage", () => {
  it("Should keep what is pending in memory: many adds in an interval write its storage once (the alarm), never the tally", async () => {
    const { treeId, node } = await seedTree();
    const stub = env.HIT_TALLY.get(env.HIT_TALLY.idFromName(treeId));
    await runInDurableObject(stub, async (instance: HitTally, state) => {
      const writes = { put: 0, get: 0, alarm: 0 };
      const storage = state.storage;
      const realPut = storage.put.bind(storage);
      const realGet = storage.get.bind(storage);
      const realAlarm = storage.setAlarm.bind(storage);
      storage.put = ((...args: Parameters<typeof storage.put>) => (writes.put++, realPut(...args))) as typeof storage.put;
      storage.get = ((...args: Parameters<typeof storage.get>) => (writes.get++, realGet(...args))) as typeof storage.get;
      storage.setAlarm = ((...args: Parameters<typeof storage.setAlarm>) => (writes.alarm++, realAlarm(...args))) as typeof storage.setAlarm;
      for (let i = 0; i < 50; i++) await instance.add(isolateFlush(treeId, node, 1, 1000 + i), 60_000);
      expect(writes).toEqual({ put: 0, get: 0, alarm: 1 });
      expect(await instance.pendingRows()).toBe(3);
      expect([...(await storage.list()).keys()]).toEqual([]);
    });
  });

  it("Should keep at most MAX_PENDING_NODES nodes per tree, and the tree's row and recent rows beside them", async () => {
    const { treeId, node } = await seedTree();
    const stub = env.HIT_TALLY.get(env.HIT_TALLY.idFromName(treeId));
    await runInDurableObject(stub, async (instance: HitTally, state) => {
      const batch = isolateFlush(treeId, node, 1, 5);
      for (let i = 0; i < MAX_PENDING_NODES + 10; i++) batch.nodes[`absent-${i}`] = { hits: 1, lastHitAt: 5 };
      await instance.add(batch, 60_000);
      await instance.add(isolateFlush(treeId, node, 2, 6), 60_000);
      // The tree's row, the recent rows, and the nodes up to the bound: the first-seen node kept its later hits.
      expect(await instance.pendingRows()).toBe(1 + 1 + MAX_PENDING_NODES);
      await state.storage.deleteAlarm();
    });
  });

  it("Should write a large tally in D1 batches of at most PAGE_ROWS updates, every node counted", async () => {
    const { treeId, nodes } = await seedNodes(PAGE_ROWS * 2 + 7);
    const stub = env.HIT_TALLY.get(env.HIT_TALLY.idFromName(treeId));
    await runInDurableObject(stub, async (instance: HitTally) => {
      const db = (instance as unknown as { env: Env }).env.DB;
      const sizes: number[] = [];
      const realBatch = db.batch.bind(db);
      db.batch = (async (statements: D1PreparedStatement[]) => (sizes.push(statements.length), realBatch(statements))) as typeof db.batch;
      const batch = isolateFlush(treeId, nodes[0], 1, 5);
      for (const node of nodes.slice(1)) batch.nodes[node] = { hits: 1, lastHitAt: 5 };
      await instance.add(batch, 60_000);
      await instance.alarm();
      expect(await instance.pendingRows()).toBe(0);
      db.batch = realBatch as typeof db.batch;
      expect(sizes.length).toBe(Math.ceil((nodes.length + 2) / PAGE_ROWS));
      // A page's rows, plus the recent rows' second statement (their insert and their cap) on the first page.
      expect(Math.max(...sizes)).toBeLessThanOrEqual(PAGE_ROWS + 2);
    });
    const counted = await env.DB.prepare("SELECT count(*) AS n FROM nodes WHERE tree_id = ?1 AND hits = 1").bind(treeId).first<{ n: number }>();
    expect(counted?.n).toBe(nodes.length);
    expect(await treeHits(treeId)).toBe(1);
  });

  it("Should split a tally into pages of at most the given rows, every count in exactly one page", () => {
    const tally = isolateFlush("t", "n-0", 1, 1);
    for (let i = 1; i < 12; i++) tally.nodes[`n-${i}`] = { hits: i, lastHitAt: i };
    tally.templates.tpl = 3;
    const pages = tallyPages(tally, 5);
    expect(pages.map(tallyRows)).toEqual([5, 5, 5]);
    expect(pages[0].tree).toEqual(tally.tree);
    expect(pages[0].recent).toEqual(tally.recent);
    expect(pages.slice(1).every((p) => p.tree === null && p.recent.length === 0)).toBe(true);
    const nodes = Object.assign({}, ...pages.map((p) => p.nodes));
    expect(nodes).toEqual(tally.nodes);
    expect(pages.reduce((n, p) => n + (p.templates.tpl ?? 0), 0)).toBe(3);
  });
});
