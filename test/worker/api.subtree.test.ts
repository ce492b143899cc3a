import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { tenantOf } from "../../src/core/hash";
import { SUBTREE_SQL } from "../../src/store/tree/subtree";
import { api, newKey, ok, type NodeSummary } from "./api-helpers";

interface SubtreePage {
  tree_id: string;
  node: string | null;
  depth: number;
  data: NodeSummary[];
  truncated: boolean;
}

/**
 * A tenant's tree of `n` nodes inserted directly: node i's parent is node
 * floor((i-1)/fan) (the first `fan` hang from the root), so every inner node has `fan` children.
 */
async function syntheticTree(n: number, fan: number): Promise<{ treeId: string; key: string }> {
  const key = newKey();
  const treeId = crypto.randomUUID().replace(/-/g, "");
  const prefix = treeId.slice(0, 12);
  await env.DB.prepare(`INSERT INTO trees (id, tenant, namespace, model, frame, created_at) VALUES (?1, ?2, 'sub', 'gpt-4o', '{"model":"gpt-4o"}', 0)`)
    .bind(treeId, tenantOf(`Bearer ${key}`))
    .run();
  await env.DB.prepare(
    `WITH RECURSIVE seq(i, d) AS (SELECT 1, 1 UNION ALL SELECT i + 1, 0 FROM seq WHERE i < ?3)
     INSERT INTO nodes (hash, parent, tree_id, depth, role, message, observations, hits, created_at)
     SELECT ?2 || printf('%020x', i),
            CASE WHEN i <= ?4 THEN ?1 ELSE ?2 || printf('%020x', (i - 1) / ?4) END,
            ?1, 0,
            CASE WHEN i % 2 = 0 THEN 'assistant' ELSE 'user' END,
            json_object('role', CASE WHEN i % 2 = 0 THEN 'assistant' ELSE 'user' END, 'content', 'message ' || i),
            i % 2, i % 7, 0
     FROM seq`,
  )
    .bind(treeId, prefix, n, fan)
    .run();
  // Depth by walking the parents (the formula above only fixes the first level).
  await env.DB.prepare(
    `WITH RECURSIVE lv(hash, d) AS (SELECT hash, 1 FROM nodes WHERE parent = ?1 UNION ALL SELECT n.hash, lv.d + 1 FROM nodes n JOIN lv ON n.parent = lv.hash)
     UPDATE nodes SET depth = (SELECT d FROM lv WHERE lv.hash = nodes.hash) WHERE tree_id = ?1`,
  )
    .bind(treeId)
    .run();
  await env.DB.prepare(`UPDATE trees SET node_count = ?2 WHERE id = ?1`).bind(treeId, n).run();
  return { treeId, key };
}

const subtree = (treeId: string, key: string, query = "") => ok<SubtreePage>(api(`/trees/${treeId}/subtree${query}`, { token: key }));
const children = (treeId: string, key: string, parent?: string) =>
  ok<{ data: NodeSummary[] }>(api(`/trees/${treeId}/children?limit=500${parent ? `&parent=${parent}` : ""}`, { token: key }));

describe("GET /api/trees/:treeId/subtree", () => {
  it("Should return a 500-node subtree in one response, breadth-first, each node as the children API shows it", async () => {
    const { treeId, key } = await syntheticTree(584, 8); // 8 + 64 + 512
    const page = await subtree(treeId, key, "?limit=600");
    expect(page.truncated).toBe(false);
    expect(page.data).toHaveLength(584);
    expect(new Set(page.data.map((n) => n.hash)).size).toBe(584);
    const depths = page.data.map((n) => n.depth);
    expect(depths).toEqual([...depths].sort((a, b) => a - b));
    expect(depths[0]).toBe(1);
    expect(depths[583]).toBe(3);
    const seen = new Set([treeId]);
    for (const n of page.data) {
      expect(seen.has(n.parent)).toBe(true); // every parent came before its children
      seen.add(n.hash);
    }
    const level = await children(treeId, key);
    expect(page.data.slice(0, 8)).toEqual(level.data);
    const below = await children(treeId, key, level.data[3].hash);
    expect(page.data.filter((n) => n.parent === level.data[3].hash)).toEqual(below.data);
    expect(below.data[0]).toMatchObject({ child_count: 8, preview: expect.stringMatching(/^message \d+$/) });
  });

  it("Should stop at `depth` levels below `node` and cut at `limit` with truncated, keeping each parent's first children", async () => {
    const { treeId, key } = await syntheticTree(584, 8);
    const level = await children(treeId, key);
    const two = await subtree(treeId, key, "?depth=2");
    expect(two.data).toHaveLength(8 + 64);
    expect(two.truncated).toBe(false);
    const one = await subtree(treeId, key, `?node=${level.data[1].hash}&depth=1`);
    expect(one).toMatchObject({ tree_id: treeId, node: level.data[1].hash, depth: 1, truncated: false });
    expect(one.data).toEqual((await children(treeId, key, level.data[1].hash)).data);
    const under = await subtree(treeId, key, `?node=${level.data[1].hash}`);
    expect(under.data).toHaveLength(8 + 64);
    expect(under.data.every((n) => n.depth > 1)).toBe(true);

    const cut = await subtree(treeId, key, "?limit=11");
    expect(cut.truncated).toBe(true);
    expect(cut.data).toHaveLength(11);
    expect(cut.data.slice(0, 8)).toEqual(level.data);
    expect(cut.data.slice(8)).toEqual((await children(treeId, key, level.data[0].hash)).data.slice(0, 3));
    const exact = await subtree(treeId, key, "?depth=1&limit=8");
    expect(exact.truncated).toBe(false);
  });

  it("Should read through nodes_parent_idx without scanning the nodes table", async () => {
    const { treeId } = await syntheticTree(100, 4);
    const plan = await env.DB.prepare(`EXPLAIN QUERY PLAN ${SUBTREE_SQL}`).bind(treeId, 10, 501).all<{ detail: string }>();
    const details = plan.results.map((r) => r.detail);
    expect(details.some((d) => /INDEX nodes_parent_idx \(parent=\?/.test(d))).toBe(true);
    expect(details.some((d) => /^SCAN (n|c|f|x|nodes)\b/.test(d))).toBe(false);
  });

  it("Should answer 404 for another tenant's tree or a node of another tree, 400 for a bad query", async () => {
    const mine = await syntheticTree(20, 4);
    const theirs = await syntheticTree(20, 4);
    const res = await api(`/trees/${mine.treeId}/subtree`, { token: theirs.key });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("not_found");
    const theirNode = (await children(theirs.treeId, theirs.key)).data[0].hash;
    expect((await api(`/trees/${mine.treeId}/subtree?node=${theirNode}`, { token: mine.key })).status).toBe(404);
    expect((await api(`/trees/${mine.treeId}/subtree?node=xyz`, { token: mine.key })).status).toBe(400);
    expect((await api(`/trees/${mine.treeId}/subtree?limit=0`, { token: mine.key })).status).toBe(400);
    expect((await api(`/trees/${mine.treeId}/subtree?limit=2001`, { token: mine.key })).status).toBe(400);
    expect((await api(`/trees/${mine.treeId}/subtree?depth=0`, { token: mine.key })).status).toBe(400);
    expect((await subtree(mine.treeId, mine.key)).data).toHaveLength(20);
    expect((await ok<SubtreePage>(api(`/trees/${mine.treeId}/subtree`))).data).toHaveLength(20); // the admin sees every tree
  });
});
