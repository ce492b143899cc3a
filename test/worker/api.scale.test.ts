import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { CHILDREN_SQL } from "../../src/store/tree/tree-list";
import { api, ok, type NodeSummary, type Tree } from "./api-helpers";

const N = 100_000;

/**
 * Builds a 100k-node tree with direct inserts (one statement): node i's parent
 * is node floor((i-1)/100), so the root has 100 children and every inner node 100.
 */
async function bigTree(): Promise<{ treeId: string; tenantKey: string }> {
  const treeId = crypto.randomUUID().replace(/-/g, "");
  const prefix = treeId.slice(0, 12);
  await env.DB.prepare(
    `INSERT INTO trees (id, tenant, namespace, model, frame, created_at) VALUES (?1, 'bench-tenant', 'bench', 'gpt-4o', '{"model":"gpt-4o"}', 0)`,
  )
    .bind(treeId)
    .run();
  await env.DB.prepare(
    `WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < ${N})
     INSERT INTO nodes (hash, parent, tree_id, depth, role, message, observations, hits, created_at)
     SELECT ?2 || printf('%020x', i),
            CASE WHEN i <= 100 THEN ?1 ELSE ?2 || printf('%020x', (i - 1) / 100) END,
            ?1,
            CASE WHEN i <= 100 THEN 1 WHEN i <= 10100 THEN 2 ELSE 3 END,
            CASE WHEN i % 2 = 0 THEN 'assistant' ELSE 'user' END,
            json_object('role', CASE WHEN i % 2 = 0 THEN 'assistant' ELSE 'user' END, 'content', 'message ' || i),
            i % 2, i % 7, 0
     FROM seq`,
  )
    .bind(treeId, prefix)
    .run();
  await env.DB.prepare(`UPDATE trees SET node_count = (SELECT count(*) FROM nodes WHERE tree_id = ?1) WHERE id = ?1`).bind(treeId).run();
  return { treeId, tenantKey: "bench-tenant" };
}

describe("trajectory API on a 100k-node tree", () => {
  it("Should list one level per page through nodes_parent_idx, never scanning or sorting the tree", async () => {
    const { treeId } = await bigTree();
    const tree = await ok<Tree>(api(`/trees/${treeId}`));
    expect(tree.node_count).toBe(N);
    const plan = await env.DB.prepare(`EXPLAIN QUERY PLAN ${CHILDREN_SQL}`).bind(treeId, 0, 50).all<{ detail: string }>();
    const details = plan.results.map((r) => r.detail);
    expect(details.some((d) => /SEARCH n USING (COVERING )?INDEX nodes_parent_idx \(parent=\? AND rowid>\?\)/.test(d))).toBe(true);
    expect(details.filter((d) => /SEARCH c USING (COVERING )?INDEX nodes_parent_idx \(parent=\?\)/.test(d)).length).toBeGreaterThanOrEqual(3);
    expect(details.some((d) => /^SCAN (n|c|nodes)\b/.test(d))).toBe(false);
    expect(details.some((d) => /TEMP B-TREE/.test(d))).toBe(false);

    const first = await ok<{ data: NodeSummary[]; next_cursor: string }>(api(`/trees/${treeId}/children?limit=60`));
    expect(first.data).toHaveLength(60);
    expect(first.data[0]).toMatchObject({ depth: 1, child_count: 100 });
    const second = await ok<{ data: NodeSummary[]; next_cursor: string | null }>(api(`/trees/${treeId}/children?limit=60&cursor=${first.next_cursor}`));
    expect(second.data).toHaveLength(40);
    expect(second.next_cursor).toBeNull();
    const deep = await ok<{ data: NodeSummary[] }>(api(`/trees/${treeId}/children?parent=${first.data[5].hash}&limit=500`));
    expect(deep.data).toHaveLength(100);
    expect(deep.data.every((n) => n.depth === 2 && n.child_count === 100)).toBe(true);
  });

  it("Should prune a 10k-node subtree and a stale sweep of the whole tree, with a correct node_count", async () => {
    const { treeId } = await bigTree();
    const level = await ok<{ data: NodeSummary[] }>(api(`/trees/${treeId}/children?limit=1`));
    const pruned = await ok<{ nodes: number }>(api(`/nodes/${level.data[0].hash}`, { method: "DELETE" }));
    expect(pruned.nodes).toBe(1 + 100 + 10_000);
    expect((await ok<Tree>(api(`/trees/${treeId}`))).node_count).toBe(N - 10_101);
    const preview = await ok<{ nodes: number }>(api("/prune", { method: "POST", body: { tree_id: treeId, min_hits: 1, dry_run: true } }));
    expect(preview.nodes).toBeGreaterThan(0);
    const swept = await ok<{ nodes: number }>(api("/prune", { method: "POST", body: { tree_id: treeId, min_hits: 1 } }));
    expect(swept.nodes).toBe(preview.nodes);
    const left = await env.DB.prepare("SELECT count(*) AS n FROM nodes WHERE tree_id = ?1").bind(treeId).first<{ n: number }>();
    expect((await ok<Tree>(api(`/trees/${treeId}`))).node_count).toBe(left?.n);
    const orphans = await env.DB.prepare(
      "SELECT count(*) AS n FROM nodes c WHERE c.tree_id = ?1 AND c.parent <> ?1 AND NOT EXISTS (SELECT 1 FROM nodes p WHERE p.hash = c.parent)",
    )
      .bind(treeId)
      .first<{ n: number }>();
    expect(orphans?.n).toBe(0);
  }, 120_000); // a paged prune of a 100,000-node tree: hundreds of bounded D1 calls (seconds; more beside other suites)
});
