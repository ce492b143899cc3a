import { createExecutionContext, createScheduledController, runDurableObjectAlarm, runInDurableObject, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import worker from "../../src/index";
import { describe, expect, it } from "vitest";
import { REFUND_TOOLS } from "../../tools/refund-desk";
import { treeWriterOf } from "../../src/store/objects/tree-objects";
import { api, learn, newKey, ok, onlyTree, storedCount, type NodeSummary, type Tree, importFor } from "./api-helpers";
import { chat, eventually, generations, uniqueModel } from "./helpers";

type Msg = { role: string; content: string | null; tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>; tool_call_id?: string };

/** Walks the refund desk for one order: three model turns, each recorded. */
async function refundConversation(key: string, model: string, order = "A-1", headers: Record<string, string> = {}) {
  const messages: Msg[] = [{ role: "user", content: `Refund order #${order} please` }];
  const results = [JSON.stringify({ order_id: order, status: "delivered", amount: 42 }), JSON.stringify({ order_id: order, refunded: true })];
  for (let turn = 0; turn < 3; turn++) {
    const body = { model, tools: REFUND_TOOLS, messages: [...messages] };
    await learn(body, key, headers);
    const served = (await (await chat(body, { key, headers })).json()) as { choices: Array<{ message: Msg }> };
    const answer = served.choices[0].message;
    messages.push({ role: "assistant", content: answer.content, ...(answer.tool_calls ? { tool_calls: answer.tool_calls } : {}) });
    if (turn < 2) messages.push({ role: "tool", tool_call_id: answer.tool_calls![0].id, content: results[turn] });
  }
  return messages;
}

/** Walks down the first child of every level to the deepest node. */
async function firstPath(treeId: string, key: string): Promise<NodeSummary[]> {
  const path: NodeSummary[] = [];
  let parent = "";
  for (;;) {
    const page = await ok<{ data: NodeSummary[] }>(api(`/trees/${treeId}/children${parent ? `?parent=${parent}` : ""}`, { token: key }));
    if (page.data.length === 0) return path;
    path.push(page.data[0]);
    parent = page.data[0].hash;
  }
}

describe("trajectory API: reading what the agent learned", () => {
  it("Should list the tenant's tree with its frame, counters and stats after real traffic", async () => {
    const key = newKey();
    const model = uniqueModel("gpt-4o");
    await refundConversation(key, model);
    await eventually(async () => (await onlyTree(key)).hits >= 3);
    const tree = await onlyTree(key);
    expect(tree).toMatchObject({ model, namespace: "default", tools: ["get_order", "refund"], misses: 3, node_count: 6 });
    expect(tree.node_count).toBe(await storedCount(tree.id));
    expect(tree.last_hit_at).toBeGreaterThan(0);
    const full = await ok<{ frame: { model: string; tools: unknown[] } }>(api(`/trees/${tree.id}`, { token: key }));
    expect(full.frame.model).toBe(model);
    expect(full.frame.tools).toHaveLength(2);
    const stats = await ok<{
      overall: { hits: number; misses: number; hit_rate: number; cost_saved_usd: number; prompt_tokens_saved: number; latency_saved_ms: number };
      trees: Array<{ tree_id: string }>;
    }>(api("/stats", { token: key }));
    expect(stats.overall.hits).toBeGreaterThanOrEqual(3);
    expect(stats.overall.misses).toBe(3);
    expect(stats.overall.hit_rate).toBeCloseTo(stats.overall.hits / (stats.overall.hits + 3));
    expect(stats.overall.prompt_tokens_saved).toBeGreaterThan(0);
    expect(stats.overall.cost_saved_usd).toBeGreaterThan(0); // gpt-4o-… is priced by prefix
    expect(stats.trees.map((t) => t.tree_id)).toEqual([tree.id]);
  });

  it("Should read the tree level by level, one node in full, and a path that replays as a hit", async () => {
    const key = newKey();
    const model = uniqueModel();
    const conversation = await refundConversation(key, model);
    const tree = await onlyTree(key);
    const path = await firstPath(tree.id, key);
    expect(path.map((n) => n.role)).toEqual(["user", "assistant", "tool", "assistant", "tool", "assistant"]);
    expect(path.map((n) => n.depth)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(path[0].preview).toContain("Refund order #A-1");
    expect(path[1]).toMatchObject({ observations: 1, child_count: 1 });
    expect(path[1].preview).toContain("get_order()");
    expect(path[0].child_count).toBe(1);
    const leaf = path[5];
    const node = await ok<{ tree_id: string; role: string; message: { content: string }; observations: number; finish_reason: string }>(
      api(`/nodes/${leaf.hash}`, { token: key }),
    );
    expect(node).toMatchObject({ tree_id: tree.id, role: "assistant", observations: 1, finish_reason: "stop" });
    expect(node.message.content).toBe(conversation[5].content);
    const trajectory = await ok<{ tree_id: string; messages: Msg[] }>(api(`/nodes/${leaf.hash}/path`, { token: key }));
    expect(trajectory.messages.map((m) => m.role)).toEqual(path.map((n) => n.role));
    expect(trajectory.messages[1].tool_calls?.[0].id).toBe("call_0");
    const replay = await chat({ model, tools: REFUND_TOOLS, messages: trajectory.messages.slice(0, -1) }, { key });
    expect(replay.headers.get("muscle-mem-cache")).toBe("hit");
    expect(((await replay.json()) as { choices: Array<{ message: Msg }> }).choices[0].message.content).toBe(conversation[5].content);
  });

  it("Should page through children with a cursor, each child once", async () => {
    const key = newKey();
    // A model that answers new text every time: nothing to generalise into a template.
    const model = uniqueModel("fresh");
    for (const order of ["B-1", "B-2", "B-3", "B-4", "B-5"])
      await learn({ model, tools: REFUND_TOOLS, messages: [{ role: "user", content: `Refund order #${order}` }] }, key);
    const tree = await onlyTree(key);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: { data: NodeSummary[]; next_cursor: string | null } = await ok(
        api(`/trees/${tree.id}/children?limit=2${cursor ? `&cursor=${cursor}` : ""}`, { token: key }),
      );
      seen.push(...page.data.map((n) => n.preview));
      cursor = page.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen.sort()).toEqual(["B-1", "B-2", "B-3", "B-4", "B-5"].map((o) => `Refund order #${o}`));
  });

  it("Should export trajectories as JSONL and import them idempotently into a tree that serves them", async () => {
    const key = newKey();
    const model = uniqueModel();
    const conversation = await refundConversation(key, model);
    const tree = await onlyTree(key);
    const exported = await api(`/trees/${tree.id}/export`, { token: key });
    expect(exported.headers.get("content-type")).toContain("ndjson");
    const lines = (await exported.text())
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { model: string; tools: unknown[]; messages: Msg[]; scripted_assistant_idx: number[] });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ model, scripted_assistant_idx: [] });
    expect(lines[0].messages.map((m) => m.content)).toEqual(conversation.map((m) => m.content));
    const jsonl = lines.map((l) => JSON.stringify(l)).join("\n");
    const other = newKey();
    const first = await ok<{ lines: number; trees: number; nodes_inserted: number; answers: number }>(
      importFor(other, { body: jsonl, headers: { "content-type": "application/x-ndjson", "muscle-mem-namespace": "seeded" } }),
    );
    expect(first).toMatchObject({ lines: 1, trees: 1, nodes_inserted: 6, answers: 3 });
    const again = await ok<{ nodes_inserted: number }>(importFor(other, { body: jsonl, headers: { "muscle-mem-namespace": "seeded" } }));
    expect(again.nodes_inserted).toBe(0);
    const seeded = await onlyTree(other);
    expect(seeded).toMatchObject({ namespace: "seeded", node_count: 6, misses: 0 });
    const before = await generations(model);
    for (let i = 1; i < conversation.length; i += 2) {
      const res = await chat(
        { model, tools: REFUND_TOOLS, messages: lines[0].messages.slice(0, i) },
        { key: other, headers: { "muscle-mem-namespace": "seeded" } },
      );
      expect(res.headers.get("muscle-mem-cache")).toBe("hit");
      await res.arrayBuffer();
    }
    expect(await generations(model)).toBe(before);
  });

  it("Should let the admin import into a named tenant and see every tenant", async () => {
    const a = newKey();
    const model = uniqueModel();
    const line = JSON.stringify({
      id: "x",
      model,
      tools: null,
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: "hello" },
      ],
    });
    const tenant = (await ok<{ tenant: string }>(importFor(a, { body: line }))).tenant;
    const b = newKey();
    const seeded = await ok<{ tenant: string; nodes_inserted: number }>(
      api(`/import?tenant=${tenant}`, { method: "POST", body: line.replace('"hi"', '"hey"') }),
    );
    expect(seeded).toMatchObject({ tenant, nodes_inserted: 2 });
    expect((await onlyTree(a)).node_count).toBe(4);
    expect((await ok<{ data: Tree[] }>(api("/trees", { token: b }))).data).toEqual([]);
    const all = await ok<{ data: Tree[] }>(api("/trees?limit=200"));
    expect(all.data.some((t) => t.tenant === tenant && t.model === model)).toBe(true);
    const res = await chat({ model, messages: [{ role: "user", content: "hey" }] }, { key: a, headers: { "cache-control": "only-if-cached" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("muscle-mem-cache")).toBe("hit");
  });
});

describe("trajectory API: pruning", () => {
  it("Should prune a subtree so that the next identical request misses, and keep node_count true", async () => {
    const key = newKey();
    const model = uniqueModel();
    const conversation = await refundConversation(key, model);
    const tree = await onlyTree(key);
    const path = await (async () => {
      const trajectory: NodeSummary[] = [];
      let parent = "";
      for (let i = 0; i < 4; i++) {
        const page = await ok<{ data: NodeSummary[] }>(api(`/trees/${tree.id}/children${parent ? `?parent=${parent}` : ""}`, { token: key }));
        trajectory.push(page.data[0]);
        parent = page.data[0].hash;
      }
      return trajectory;
    })();
    const refundCall = path[3];
    const pruned = await ok<{ nodes: number; answers: number; tree_id: string }>(api(`/nodes/${refundCall.hash}`, { token: key, method: "DELETE" }));
    expect(pruned).toMatchObject({ tree_id: tree.id, nodes: 3, answers: 2 });
    expect((await onlyTree(key)).node_count).toBe(3);
    expect(await storedCount(tree.id)).toBe(3);
    expect((await api(`/nodes/${refundCall.hash}`, { token: key })).status).toBe(404);
    const body = { model, tools: REFUND_TOOLS, messages: conversation.slice(0, 3) };
    const before = await generations(model);
    const next = await chat(body, { key });
    expect(next.headers.get("muscle-mem-cache")).toBe("miss");
    await next.arrayBuffer();
    await eventually(async () => (await generations(model)) === before + 1);
    const earlier = await chat({ model, tools: REFUND_TOOLS, messages: conversation.slice(0, 1) }, { key });
    expect(earlier.headers.get("muscle-mem-cache")).toBe("hit");
  });

  it("Should preview, then prune stale paths by age and hits, keeping fresh branches and their ancestors", async () => {
    const key = newKey();
    const model = uniqueModel();
    for (const order of ["C-1", "C-2"]) await learn({ model, tools: REFUND_TOOLS, messages: [{ role: "user", content: `Refund order #${order}` }] }, key);
    await eventually(async () => (await onlyTree(key)).hits >= 2);
    const tree = await onlyTree(key);
    const old = Date.now() - 10 * 86_400_000;
    await env.DB.prepare(
      "UPDATE nodes SET created_at = ?1, last_hit_at = CASE WHEN last_hit_at IS NULL THEN NULL ELSE ?1 END WHERE tree_id = ?2 AND hash IN (SELECT hash FROM nodes WHERE tree_id = ?2 AND depth = 1 AND message LIKE '%C-1%' UNION SELECT n.hash FROM nodes n JOIN nodes p ON n.parent = p.hash WHERE p.message LIKE '%C-1%' AND n.tree_id = ?2)",
    )
      .bind(old, tree.id)
      .run();
    const preview = await ok<{ dry_run: boolean; nodes: number; answers: number; roots: Array<{ preview: string }> }>(
      api("/prune", { token: key, method: "POST", body: { older_than_ms: 86_400_000, tree_id: tree.id, dry_run: true } }),
    );
    expect(preview).toMatchObject({ dry_run: true, nodes: 2, answers: 1 });
    expect(preview.roots.map((r) => r.preview)).toEqual(["Refund order #C-1"]);
    expect(await storedCount(tree.id)).toBe(4);
    const done = await ok<{ nodes: number }>(api("/prune", { token: key, method: "POST", body: { older_than_ms: 86_400_000 } }));
    expect(done.nodes).toBe(2);
    expect((await onlyTree(key)).node_count).toBe(2);
    const gone = await chat(
      { model, tools: REFUND_TOOLS, messages: [{ role: "user", content: "Refund order #C-1" }] },
      { key, headers: { "cache-control": "only-if-cached" } },
    );
    expect(gone.status).toBe(504);
    const kept = await chat(
      { model, tools: REFUND_TOOLS, messages: [{ role: "user", content: "Refund order #C-2" }] },
      { key, headers: { "cache-control": "only-if-cached" } },
    );
    expect(kept.status).toBe(200);
    const byHits = await ok<{ nodes: number; answers: number }>(api("/prune", { token: key, method: "POST", body: { min_hits: 1000, dry_run: true } }));
    expect(byHits).toMatchObject({ nodes: 2, answers: 1 });
  });

  it("Should run the same stale prune with PRUNE_TTL_MS on the tree's alarm, which the cron trigger arms", async () => {
    const key = newKey();
    const model = uniqueModel();
    await learn({ model, messages: [{ role: "user", content: "Refund order #D-1" }] }, key);
    await eventually(async () => (await onlyTree(key)).hits >= 1);
    const tree = await onlyTree(key);
    await env.DB.prepare("UPDATE nodes SET created_at = 1, last_hit_at = CASE WHEN last_hit_at IS NULL THEN NULL ELSE 1 END WHERE tree_id = ?1")
      .bind(tree.id)
      .run();
    // As if the tree was written before alarms existed: no alarm, and the cron's sweep starts from the first tree.
    const writer = treeWriterOf(env, tree.id);
    await runInDurableObject(writer, (_, state) => state.storage.deleteAlarm());
    await env.DB.prepare("DELETE FROM prune_sweep").run();
    const ctx = createExecutionContext();
    worker.scheduled(createScheduledController({ cron: "17 3 * * *", scheduledTime: Date.now() }), env, ctx);
    await waitOnExecutionContext(ctx);
    expect(await storedCount(tree.id)).toBe(2);
    expect(await runDurableObjectAlarm(writer)).toBe(true);
    expect(await storedCount(tree.id)).toBe(0);
    expect((await onlyTree(key)).node_count).toBe(0);
  });
});

describe("stats price table", () => {
  it("Should price models exactly, by their longest priced prefix, and from PRICES_JSON", async () => {
    const { costSaved, priceOf, pricesOf, DEFAULT_PRICES } = await import("../../src/core/prices");
    expect(priceOf(DEFAULT_PRICES, "gpt-4o")).toEqual({ prompt: 2.5, completion: 10 });
    expect(priceOf(DEFAULT_PRICES, "gpt-4o-mini-2024-07-18")).toEqual(DEFAULT_PRICES["gpt-4o-mini"]);
    expect(priceOf(DEFAULT_PRICES, "ft:gpt-4.1-2025-04-14:org:x:y")).toEqual(DEFAULT_PRICES["gpt-4.1"]);
    expect(priceOf(DEFAULT_PRICES, "grok-3")).toBeNull();
    const table = pricesOf('{"grok-3":{"prompt":3,"completion":15}}');
    expect(costSaved(table, "grok-3", 1_000_000, 100_000)).toBeCloseTo(4.5);
    expect(pricesOf("not json")).toBe(DEFAULT_PRICES);
  });
});
