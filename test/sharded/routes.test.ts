import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { BOOKMARK_HEADER, shards } from "../../src/store/shards/shards";
import { dbNamed, homeOf, NAMES } from "./shard-helpers";
import { api, newKey, ok, type NodeSummary, type Tree, importFor } from "../worker/api-helpers";
import { chat, eventually, later, recorded, uniqueModel } from "../worker/helpers";

/**
 * The Worker over four D1 shards (vitest.config.ts, project "sharded"):
 * D1_SHARDS="DB,DB_1,DB_2,DB_3", D1_READ_REPLICATION=on. Every tree must live
 * wholly in the shard the tree directory names, and every route must find it there.
 */
const TREES = 16;

/** How many rows of `table` with `column = value` each shard holds, by shard name. */
async function rowsPerShard(table: "trees" | "nodes", column: "id" | "tree_id", value: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const name of NAMES) {
    const row = await dbNamed(name).prepare(`SELECT count(*) AS n FROM ${table} WHERE ${column} = ?1`).bind(value).first<{ n: number }>();
    out[name] = row?.n ?? 0;
  }
  return out;
}

function conversation(model: string, i: number) {
  return {
    model,
    messages: [
      { role: "system", content: `You are desk ${i}.` },
      { role: "user", content: `hello from agent ${i}` },
    ],
  };
}

/** Each desk is its own tree: its own namespace. */
function desk(i: number): Record<string, string> {
  return { "muscle-mem-namespace": `desk-${i}` };
}

describe("a Worker over four shards", () => {
  const key = newKey();
  const model = uniqueModel("echo");
  const treeIds: string[] = [];
  const treeOfDesk = new Map<number, string>();

  beforeAll(async () => {
    expect(shards(env).map((s) => s.name)).toEqual(NAMES);
    for (let i = 0; i < TREES; i++) {
      const res = await chat(conversation(model, i), { key, headers: desk(i) });
      await res.arrayBuffer();
      expect(res.headers.get("muscle-mem-cache")).toBe("miss");
      await recorded(conversation(model, i), { key, headers: desk(i) });
    }
    const page = await ok<{ data: Tree[] }>(api("/trees?limit=200", { token: key }));
    treeIds.push(...page.data.map((t) => t.id));
    for (const t of page.data) treeOfDesk.set(Number(t.namespace.slice("desk-".length)), t.id);
  });

  it("Should keep each tree wholly in the shard the directory names, new trees on the least-full shard", async () => {
    expect(treeIds).toHaveLength(TREES);
    const used = new Map<string, number>();
    for (const id of treeIds) {
      const home = (await homeOf(id)) ?? "";
      used.set(home, (used.get(home) ?? 0) + 1);
      const trees = await rowsPerShard("trees", "id", id);
      const nodes = await rowsPerShard("nodes", "tree_id", id);
      for (const name of NAMES) {
        expect(trees[name]).toBe(name === home ? 1 : 0);
        expect(nodes[name] > 0).toBe(name === home);
      }
    }
    // Sixteen trees made one after another, each on the shard with the fewest: four each (the hash rule spreads them unevenly).
    expect(NAMES.map((n) => used.get(n) ?? 0)).toEqual([4, 4, 4, 4]);
  });

  it("Should serve hits from every shard, with a bookmark for the tree's shard, and count them there", async () => {
    for (let i = 0; i < TREES; i++) {
      const res = await chat(conversation(model, i), { key, headers: desk(i) });
      const body = (await res.json()) as { choices: Array<{ message: { content: string } }> };
      expect(res.headers.get("muscle-mem-cache")).toBe("hit");
      expect(body.choices[0].message.content).toBe(`echo: hello from agent ${i}`);
    }
    // The first hit after a recording reads D1 (the recording dropped the hot entry): it names the shard.
    const fresh = conversation(model, 99);
    await (await chat(fresh, { key, headers: desk(99) })).arrayBuffer();
    await recorded(fresh, { key, headers: desk(99) });
    // The clock past HOT_CACHE_TTL_MS = 200, so the next hit reads D1.
    const hit = await later(250, async () => {
      const res = await chat(fresh, { key, headers: desk(99) });
      await res.arrayBuffer();
      return res;
    });
    expect(hit.headers.get("muscle-mem-cache")).toBe("hit");
    const bookmark = hit.headers.get(BOOKMARK_HEADER) ?? "";
    const page = await ok<{ data: Tree[] }>(api("/trees?limit=200", { token: key }));
    const freshTree = page.data.find((t) => !treeIds.includes(t.id));
    expect(freshTree).toBeDefined();
    expect(bookmark.split(":")[0]).toBe(await homeOf(freshTree?.id ?? ""));
    // Sending the bookmark back keeps reads at least that fresh; a bookmark of another shard is ignored.
    for (const sent of [bookmark, `DB_9:${bookmark.split(":").slice(1).join(":")}`]) {
      const again = await chat(fresh, { key, headers: { ...desk(99), [BOOKMARK_HEADER]: sent } });
      await again.arrayBuffer();
      expect(again.headers.get("muscle-mem-cache")).toBe("hit");
    }
    await eventually(async () => {
      const hits = await Promise.all(
        treeIds.map(
          async (id) =>
            (
              await dbNamed((await homeOf(id)) ?? "")
                .prepare("SELECT hits FROM trees WHERE id = ?1")
                .bind(id)
                .first<{ hits: number }>()
            )?.hits ?? 0,
        ),
      );
      return hits.every((h) => h >= 1);
    });
  });

  it("Should page the tree list across shards in activity order, each tree once", async () => {
    const seen: Tree[] = [];
    let cursor: string | null = "";
    while (cursor !== null) {
      const page: { data: Tree[]; next_cursor: string | null } = await ok(api(`/trees?limit=3${cursor ? `&cursor=${cursor}` : ""}`, { token: key }));
      expect(page.data.length).toBeLessThanOrEqual(3);
      seen.push(...page.data);
      cursor = page.next_cursor;
    }
    expect(seen).toHaveLength(TREES + 1);
    expect(new Set(seen.map((t) => t.id)).size).toBe(TREES + 1);
    const activity = seen.map((t) => t.last_hit_at ?? t.created_at);
    expect([...activity].sort((a, b) => b - a)).toEqual(activity);
  });

  it("Should sum stats over every shard", async () => {
    const stats = await ok<{ overall: { trees: number; hits: number; misses: number }; trees: Array<{ tree_id: string }> }>(
      api("/stats?limit=200", { token: key }),
    );
    expect(stats.overall.trees).toBe(TREES + 1);
    expect(stats.overall.misses).toBe(TREES + 1);
    expect(stats.overall.hits).toBeGreaterThanOrEqual(TREES + 3);
    expect(stats.trees).toHaveLength(TREES + 1);
  });

  // Six API reads for each of the tree set's trees (about a hundred requests): more than the default 5 s on a busy machine.
  it("Should read trees, children, nodes and paths on any shard", { timeout: 30_000 }, async () => {
    for (const id of treeIds) {
      const tree = await ok<Tree>(api(`/trees/${id}`, { token: key }));
      expect(tree.node_count).toBe(3);
      const level = await ok<{ data: NodeSummary[] }>(api(`/trees/${id}/children`, { token: key }));
      expect(level.data).toHaveLength(1);
      const node = await ok<{ tree_id: string }>(api(`/nodes/${level.data[0].hash}`, { token: key }));
      expect(node.tree_id).toBe(id);
      const path = await ok<{ tree_id: string; messages: unknown[] }>(api(`/nodes/${level.data[0].hash}/path`, { token: key }));
      expect(path).toMatchObject({ tree_id: id, messages: [{ role: "system" }] });
      expect((await api(`/trees/${id}/templates`, { token: key })).status).toBe(200);
      expect((await api(`/trees/${id}`, { token: newKey() })).status).toBe(404);
    }
  });

  it("Should export a tree from its shard and import it into another tenant's shards", async () => {
    const other = newKey();
    const id = treeOfDesk.get(5) ?? "";
    const jsonl = await (await api(`/trees/${id}/export`, { token: key })).text();
    expect(jsonl.trim().split("\n")).toHaveLength(1);
    const imported = await ok<{ nodes_inserted: number }>(importFor(other, { body: jsonl, headers: { ...desk(5), "content-type": "application/x-ndjson" } }));
    expect(imported.nodes_inserted).toBe(3);
    const mine = await ok<{ data: Tree[] }>(api("/trees", { token: other }));
    expect(mine.data).toHaveLength(1);
    const rows = await rowsPerShard("nodes", "tree_id", mine.data[0].id);
    expect(
      Object.entries(rows)
        .filter(([, n]) => n > 0)
        .map(([name]) => name),
    ).toEqual([await homeOf(mine.data[0].id)]);
    const res = await chat(conversation(model, 5), { key: other, headers: { ...desk(5), "cache-control": "only-if-cached" } });
    expect(res.status).toBe(200);
  });

  it("Should prune a node found in any shard, and the next identical request misses", async () => {
    const id = treeOfDesk.get(7) ?? "";
    const level = await ok<{ data: NodeSummary[] }>(api(`/trees/${id}/children`, { token: key }));
    const pruned = await ok<{ tree_id: string; nodes: number }>(api(`/nodes/${level.data[0].hash}`, { token: key, method: "DELETE" }));
    expect(pruned).toMatchObject({ tree_id: id, nodes: 3 });
    expect((await rowsPerShard("nodes", "tree_id", id))[(await homeOf(id)) ?? ""]).toBe(0);
    // The clock past HOT_CACHE_TTL_MS = 200: nothing read before the prune may serve it.
    const status = await later(250, async () => {
      const res = await chat(conversation(model, 7), { key, headers: { ...desk(7), "cache-control": "only-if-cached" } });
      await res.arrayBuffer();
      return res.status;
    });
    expect(status).toBe(504);
  });

  it("Should preview and run a stale prune over every shard", async () => {
    const preview = await ok<{ dry_run: boolean; trees: number; nodes: number }>(
      api("/prune", { token: key, method: "POST", body: { older_than_ms: 0, dry_run: true } }),
    );
    expect(preview.dry_run).toBe(true);
    expect(preview.nodes).toBe((TREES - 1 + 1) * 3);
    const done = await ok<{ nodes: number }>(api("/prune", { token: key, method: "POST", body: { older_than_ms: 0 } }));
    expect(done.nodes).toBe(preview.nodes);
    for (const id of treeIds) expect(Object.values(await rowsPerShard("nodes", "tree_id", id)).every((n) => n === 0)).toBe(true);
  });
});
