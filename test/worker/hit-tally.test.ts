import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { Counters } from "../../src/engine/counting/isolate-counters";
import { emptyTally, type TallyBatch } from "../../src/store/tree/tally-batch";
import { eventually } from "./helpers";

async function nodeHits(hash: string): Promise<number> {
  const row = await env.DB.prepare("SELECT hits FROM nodes WHERE hash = ?1").bind(hash).first<{ hits: number }>();
  return row?.hits ?? -1;
}

async function treeHits(id: string): Promise<number> {
  const row = await env.DB.prepare("SELECT hits FROM trees WHERE id = ?1").bind(id).first<{ hits: number }>();
  return row?.hits ?? -1;
}

/** A tree row and one answer node, so that the tally's UPDATEs have rows to land on. */
async function seed(): Promise<{ treeId: string; node: string }> {
  const treeId = crypto.randomUUID().replaceAll("-", "");
  const node = crypto.randomUUID().replaceAll("-", "");
  await env.DB.batch([
    env.DB.prepare("INSERT INTO trees (id, tenant, namespace, frame, model, created_at) VALUES (?1, 't', 'default', '{}', 'm', 0)").bind(treeId),
    env.DB.prepare("INSERT INTO nodes (hash, parent, tree_id, depth, role, message) VALUES (?1, 'p', ?2, 1, 'assistant', '{}')").bind(node, treeId),
  ]);
  return { treeId, node };
}

/** What one isolate's flush sends for `hits` hits on `node`. */
function isolateFlush(treeId: string, node: string, hits: number, at: number): TallyBatch {
  const counters = new Counters();
  for (let i = 0; i < hits; i++) {
    counters.hit(treeId, node, { promptTokens: 10, completionTokens: 5, latencyMs: 100 }, at);
    counters.request({ at, tree_id: treeId, route: "/v1/chat/completions", outcome: "hit", status: 200, latency_ms: 2, prompt_tokens: 10, completion_tokens: 5, node, template_id: null, reason: null, count: 1, request_id: null, explanation: null, error: null, tenant: null });
  }
  const [tally] = counters.drain();
  return tally;
}

describe("hit tally: hit counts reach D1 through each tree's object", () => {
  it("Should write the counts of many isolates' flushes in one D1 write per interval, summed", async () => {
    const { treeId, node } = await seed();
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
    const { treeId, node } = await seed();
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
