import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { forgetShard, readEntry, shardNamed } from "../../src/store/shards/directory";
import { settle, type MoveResult } from "../../src/store/shards/move";
import { copyTree } from "../../src/store/shards/move-pages";
import { treeWriterOf } from "../../src/store/objects/tree-objects";
import { REFUND_TOOLS } from "../../tools/refund-desk";
import { api, learn, newKey, ok, type Tree } from "../worker/api-helpers";
import { chat, eventually, storeCost, uniqueModel } from "../worker/helpers";
import { dbNamed, homeOf, NAMES, treeRows } from "./shard-helpers";

/**
 * Moving a tree between shards (POST /api/trees/:id/move, src/store/shards/move.ts)
 * over the `sharded` project's four real D1 databases.
 */
const ask = (model: string, order: string) => ({ model, tools: REFUND_TOOLS, messages: [{ role: "user", content: `Refund order #${order} please` }] });
const ONLY_CACHED = { "cache-control": "only-if-cached" };
/** Past HOT_CACHE_TTL_MS and COLO_CACHE_TTL_MS (200 ms in tests): the next request reads D1. */
const pastMemory = () => new Promise((r) => setTimeout(r, 250));

/** What a client sees of a cached answer: status, outcome, template and the choices. */
async function served(
  body: unknown,
  key: string,
  headers: Record<string, string>,
): Promise<{ status: number; cache: string | null; template: string | null; choices: unknown }> {
  const res = await chat(body, { key, headers: { ...headers, ...ONLY_CACHED } });
  const json = res.status === 200 ? ((await res.json()) as { choices: unknown }) : (await res.arrayBuffer(), { choices: null });
  return { status: res.status, cache: res.headers.get("muscle-mem-cache"), template: res.headers.get("muscle-mem-template"), choices: json.choices };
}

async function treeOf(key: string, namespace: string): Promise<Tree> {
  const page = await ok<{ data: Tree[] }>(api(`/trees?namespace=${namespace}`, { token: key }));
  expect(page.data).toHaveLength(1);
  return page.data[0];
}

describe("moving a tree between shards", () => {
  it("Should move a tree with hits and templates: served identically after, nothing left in the source, listed once", { timeout: 30_000 }, async () => {
    const key = newKey();
    const model = uniqueModel("refunds");
    const headers = { "muscle-mem-namespace": "move-1" };
    for (const order of ["A-1", "B-22", "C-333"]) await learn(ask(model, order), key, headers);
    const tree = await treeOf(key, "move-1");
    const from = (await homeOf(tree.id)) ?? "";
    expect(NAMES).toContain(from);
    await eventually(async () => (await treeRows(from, tree.id)).templates > 0);
    let templated: Awaited<ReturnType<typeof served>> | undefined;
    await eventually(async () => {
      templated = await served(ask(model, "D-4444"), key, headers);
      return templated.status === 200;
    });
    expect(templated?.template).toMatch(/^[0-9a-f]{32}$/);
    const bodies = [ask(model, "A-1"), ask(model, "B-22"), ask(model, "C-333"), ask(model, "E-55555")];
    await pastMemory();
    const before = await Promise.all(bodies.map((b) => served(b, key, headers)));
    expect(before.map((b) => b.status)).toEqual([200, 200, 200, 200]);
    const rowsBefore = await treeRows(from, tree.id);
    expect(rowsBefore.evidence).toBeGreaterThan(0);
    expect(rowsBefore.observations).toBeGreaterThan(0);

    const to = NAMES.find((n) => n !== from) ?? "";
    const moved = await ok<{ from: string; to: string; copied: Record<string, number>; deleted: Record<string, number> }>(
      api(`/trees/${tree.id}/move`, { method: "POST", body: { to } }),
    );
    expect(moved).toMatchObject({ from, to, copied: rowsBefore });
    expect(await homeOf(tree.id)).toBe(to);
    expect(await treeRows(from, tree.id)).toEqual({ trees: 0, nodes: 0, templates: 0, evidence: 0, observations: 0 });
    const rowsAfter = await treeRows(to, tree.id);
    expect(rowsAfter).toEqual(rowsBefore);
    for (const other of NAMES.filter((n) => n !== to)) expect((await treeRows(other, tree.id)).nodes).toBe(0);

    await pastMemory();
    const after = await Promise.all(bodies.map((b) => served(b, key, headers)));
    expect(after).toEqual(before);
    const all = await ok<{ data: Tree[] }>(api("/trees?limit=200", { token: key }));
    expect(all.data.filter((t) => t.id === tree.id)).toHaveLength(1);
    expect((await ok<Tree & { node_count: number }>(api(`/trees/${tree.id}`, { token: key }))).node_count).toBe(rowsBefore.nodes);
  });

  it("Should answer bad moves in the error envelope: 400 for an unknown shard, 404 for an unknown tree, 409 when already there, 403 for a tenant key", async () => {
    const key = newKey();
    const body = ask(uniqueModel("refunds"), "A-1");
    await learn(body, key, { "muscle-mem-namespace": "move-2" });
    const tree = await treeOf(key, "move-2");
    const home = await homeOf(tree.id);
    const bad = await api(`/trees/${tree.id}/move`, { method: "POST", body: { to: "DB_9" } });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { code: "invalid_request", param: "to", type: "invalid_request_error" } });
    expect((await api(`/trees/${tree.id}/move`, { method: "POST", body: { to: "db 1" } })).status).toBe(400);
    expect((await api(`/trees/${tree.id}/move`, { method: "POST", body: "{" })).status).toBe(400);
    const unknown = await api(`/trees/${"0".repeat(32)}/move`, { method: "POST", body: { to: "DB_1" } });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: { code: "not_found" } });
    const already = await api(`/trees/${tree.id}/move`, { method: "POST", body: { to: home } });
    expect(already.status).toBe(409);
    expect(await already.json()).toMatchObject({ error: { code: "conflict" } });
    expect((await api(`/trees/${tree.id}/move`, { method: "POST", body: { to: "DB_1" }, token: key })).status).toBe(403);
    expect(await homeOf(tree.id)).toBe(home);
  });

  it("Should refuse a second move while one runs, and land a recording made during the move in the new shard", { timeout: 30_000 }, async () => {
    const key = newKey();
    const model = uniqueModel("refunds");
    const headers = { "muscle-mem-namespace": "move-3" };
    for (const order of ["A-1", "B-22"]) await learn(ask(model, order), key, headers);
    const tree = await treeOf(key, "move-3");
    const from = (await homeOf(tree.id)) ?? "";
    const to = NAMES.find((n) => n !== from) ?? "";
    const during = chat(ask(model, "F-6"), { key, headers });
    // Two moves at once: one moves the tree, the other is refused (in progress, or already there).
    const moves = await Promise.all([0, 1].map(() => api(`/trees/${tree.id}/move`, { method: "POST", body: { to } })));
    expect(moves.map((m) => m.status).sort()).toEqual([200, 409]);
    await (await during).arrayBuffer();
    await eventually(async () => (await served(ask(model, "F-6"), key, headers)).status === 200);
    expect((await treeRows(from, tree.id)).nodes).toBe(0);
    expect((await treeRows(to, tree.id)).nodes).toBe(6);
  });

  it("Should never serve from a shard the tree left while an isolate still believes the old one: its read there finds nothing, and the tree's object serves from the new one", async () => {
    const key = newKey();
    const model = uniqueModel("refunds");
    const headers = { "muscle-mem-namespace": "move-4" };
    const body = ask(model, "A-1");
    await learn(body, key, headers);
    const tree = await treeOf(key, "move-4");
    const from = (await homeOf(tree.id)) ?? "";
    await pastMemory();
    expect((await served(body, key, headers)).status).toBe(200); // this isolate now remembers `from`
    const to = NAMES.find((n) => n !== from) ?? "";
    // Moved through the writer directly: this isolate is not told, as another isolate would not be.
    const result = (await treeWriterOf(env, tree.id).move(tree.id, to)) as MoveResult;
    expect(result.ok).toBe(true);
    await pastMemory();
    // The old shard holds nothing of the tree: what this isolate reads there is empty, so the cold lookup goes on
    // to the tree's object (src/engine/lookup/read-through.ts), which reads the shard the tree moved to.
    expect((await treeRows(from, tree.id)).nodes).toBe(0);
    const viaObject = await chat(body, { key, headers: { ...headers, ...ONLY_CACHED } });
    expect(viaObject.headers.get("muscle-mem-cache")).toBe("hit");
    expect(storeCost(viaObject).do).toBe(1);
    await viaObject.arrayBuffer();
    forgetShard(tree.id); // what DIRECTORY_TTL_MS does
    expect(await served(body, key, headers)).toMatchObject({ status: 200, cache: "hit" });
  });

  it("Should finish what a crashed move left (settle): a half copy is deleted from the target, a half drain from the source", async () => {
    const key = newKey();
    const model = uniqueModel("refunds");
    const headers = { "muscle-mem-namespace": "move-5" };
    for (const order of ["A-1", "B-22"]) await learn(ask(model, order), key, headers);
    const tree = await treeOf(key, "move-5");
    const from = (await homeOf(tree.id)) ?? "";
    const to = NAMES.find((n) => n !== from) ?? "";
    // Learning runs after each recording, one batch per answer: wait for both answers' batches, so that the rows
    // compared below are the tree's final ones (a late learning batch once landed between the snapshot and the check).
    await eventually(async () => (await treeRows(from, tree.id)).observations === 2);
    const rows = await treeRows(from, tree.id);
    const none = { trees: 0, nodes: 0, templates: 0, evidence: 0, observations: 0 };
    const dir = dbNamed("DB");
    // Crashed after the copy, before the switch: the target holds a copy nobody reads.
    await copyTree(shardNamed(env, from).db, shardNamed(env, to).db, tree.id);
    await dir.prepare("UPDATE tree_directory SET moving_to = ?2 WHERE tree_id = ?1").bind(tree.id, to).run();
    const afterCopy = await settle(env, (await readEntry(env, tree.id)) ?? expect.fail("no directory row"));
    expect(afterCopy).toMatchObject({ shard: from, moving_to: null, draining_from: null });
    expect(await treeRows(to, tree.id)).toEqual(none);
    expect(await treeRows(from, tree.id)).toEqual(rows);
    // Crashed after the switch, mid-drain: the source still holds rows.
    await copyTree(shardNamed(env, from).db, shardNamed(env, to).db, tree.id);
    await dir.prepare("UPDATE tree_directory SET shard = ?2, draining_from = ?3 WHERE tree_id = ?1").bind(tree.id, to, from).run();
    const afterDrain = await settle(env, (await readEntry(env, tree.id)) ?? expect.fail("no directory row"));
    expect(afterDrain).toMatchObject({ shard: to, moving_to: null, draining_from: null });
    expect(await treeRows(from, tree.id)).toEqual(none);
    expect(await treeRows(to, tree.id)).toEqual(rows);
    expect((await readEntry(env, tree.id))?.draining_from).toBeNull();
  });

  it("Should move a tree of many pages (a thousand nodes, 200 siblings at one node) whole", { timeout: 60_000 }, async () => {
    const treeId = "ab".repeat(16);
    const from = "DB_2";
    const to = "DB_3";
    const db = dbNamed(from);
    await db.prepare(`INSERT INTO trees (id, tenant, namespace, model, frame, created_at) VALUES (?1, 't', 'big', 'm', '{}', 1)`).bind(treeId).run();
    await dbNamed("DB")
      .prepare(`INSERT INTO tree_directory (tree_id, tenant, namespace, shard, created_at) VALUES (?1, 't', 'big', ?2, 1)`)
      .bind(treeId, from)
      .run();
    const hash = (n: number) => n.toString(16).padStart(32, "0");
    const statements: D1PreparedStatement[] = [];
    let n = 1;
    for (let p = 0; p < 200; p++) {
      let parent = treeId;
      for (let d = 1; d <= 5; d++) {
        statements.push(
          db
            .prepare(`INSERT INTO nodes (hash, parent, tree_id, depth, role, message, observations) VALUES (?1, ?2, ?3, ?4, ?5, '{}', ?6)`)
            .bind(hash(n), parent, treeId, d, d % 2 === 0 ? "assistant" : "user", d % 2 === 0 ? 1 : 0),
        );
        parent = hash(n++);
      }
    }
    for (let i = 0; i < statements.length; i += 200) await db.batch(statements.slice(i, i + 200));
    await db.prepare(`INSERT INTO template_observations (answer_hash, tree_id, shape_key, created_at) VALUES (?1, ?2, 'k', 1)`).bind(hash(2), treeId).run();
    const before = await treeRows(from, treeId);
    expect(before.nodes).toBe(1000);
    const moved = await ok<{ copied: Record<string, number>; deleted: Record<string, number> }>(api(`/trees/${treeId}/move`, { method: "POST", body: { to } }));
    expect(moved.copied).toEqual(before);
    expect(moved.deleted).toEqual(before);
    expect(await treeRows(to, treeId)).toEqual(before);
    expect((await treeRows(from, treeId)).nodes).toBe(0);
    expect(await homeOf(treeId)).toBe(to);
  });
});
