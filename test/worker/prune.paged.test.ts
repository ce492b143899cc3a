import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { previewStale, PRUNE_STATEMENT_ROWS, pruneStale, pruneSubtree } from "../../src/store/prune/prune";
import { batchesOf, PLAN_PAGE, type PlanNode } from "../../src/store/prune/plan";

/**
 * The paged prune (src/store/prune/prune.ts, src/store/prune/plan.ts) on real D1:
 * a tree larger than one page of the plan and many batches of deletes.
 */

/** `db` whose batches report each statement's changed rows into `changes` (real D1 underneath). */
function watched(db: D1Database, changes: number[]): D1Database {
  return new Proxy(db, {
    get(target, prop) {
      if (prop === "batch") {
        return async (statements: D1PreparedStatement[]) => {
          const results = await target.batch(statements);
          for (const r of results) changes.push(r.meta.changes ?? 0);
          return results;
        };
      }
      const value: unknown = Reflect.get(target, prop);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

function hex(n: number, salt: number): string {
  return (salt * 1_000_000 + n).toString(16).padStart(32, "0");
}

const ROLES = ["user", "assistant", "tool", "assistant", "user"];

/**
 * A tree of `paths` conversations of five messages under one root, all
 * recorded long ago, except that path 0's last assistant answer (depth 4) is fresh.
 * Returns the tree id, every node and path 0's hashes.
 */
async function seed(salt: number, paths: number): Promise<{ treeId: string; nodes: Array<{ hash: string; parent: string; role: string }>; kept: string[] }> {
  const treeId = hex(0, salt);
  const old = Date.now() - 86_400_000;
  await env.DB.prepare(`INSERT INTO trees (id, tenant, namespace, model, frame, created_at) VALUES (?1, 't', 'n', 'm', '{}', ?2)`).bind(treeId, old).run();
  const nodes: Array<{ hash: string; parent: string; role: string; depth: number; created: number }> = [];
  let n = 1;
  for (let p = 0; p < paths; p++) {
    let parent = treeId;
    for (let d = 1; d <= ROLES.length; d++) {
      const hash = hex(n++, salt);
      const fresh = p === 0 && d === 4;
      nodes.push({ hash, parent, role: ROLES[d - 1], depth: d, created: fresh ? Date.now() : old });
      parent = hash;
    }
  }
  const statements = nodes.map((x) =>
    env.DB.prepare(
      `INSERT INTO nodes (hash, parent, tree_id, depth, role, message, observations, created_at) VALUES (?1, ?2, ?3, ?4, ?5, '{"content":"x"}', ?6, ?7)`,
    ).bind(x.hash, x.parent, treeId, x.depth, x.role, x.role === "assistant" ? 1 : 0, x.created),
  );
  for (let i = 0; i < statements.length; i += 200) await env.DB.batch(statements.slice(i, i + 200));
  return { treeId, nodes, kept: nodes.slice(0, 4).map((x) => x.hash) };
}

describe("the paged prune", () => {
  it("Should batch removed nodes in whole sibling groups, deepest first, about `rows` at a time", () => {
    const node = (hash: string, parent: string, depth: number): PlanNode => ({ hash, parent, depth, answer: true, assistant: true, observations: 1 });
    const removed = [node("a", "r", 1), node("b", "r", 1), node("c", "r", 1), node("d", "a", 2), node("e", "a", 2), node("f", "b", 2)];
    const batches = batchesOf(removed, 2);
    expect(batches.map((b) => b.map((n) => n.hash))).toEqual([["d", "e"], ["f"], ["a", "b", "c"]]);
  });

  it("Should prune a tree larger than a page with no statement changing more than a batch, keeping live paths and reporting every changed key", async () => {
    const paths = Math.ceil((PLAN_PAGE * 2) / ROLES.length) + 7;
    const { treeId, nodes, kept } = await seed(1, paths);
    const criteria = { cutoff: Date.now() - 3_600_000, minHits: null };
    const preview = await previewStale(env.DB, treeId, criteria);
    expect(preview).toMatchObject({ trees: 1, nodes: nodes.length - kept.length });
    const changes: number[] = [];
    const result = await pruneStale(watched(env.DB, changes), treeId, criteria);
    expect(result.nodes).toBe(nodes.length - kept.length);
    expect(result.answers).toBe(preview.answers);
    expect(Math.max(...changes)).toBeLessThanOrEqual(PRUNE_STATEMENT_ROWS);
    const left = await env.DB.prepare(`SELECT hash FROM nodes WHERE tree_id = ?1 ORDER BY depth`).bind(treeId).all<{ hash: string }>();
    expect(left.results.map((r) => r.hash)).toEqual(kept);
    const count = await env.DB.prepare(`SELECT node_count FROM trees WHERE id = ?1`).bind(treeId).first<{ node_count: number }>();
    expect(count?.node_count).toBe(kept.length);
    const removed = new Set(nodes.map((x) => x.hash).filter((h) => !kept.includes(h)));
    const expectedKeys = new Set(nodes.filter((x) => x.role === "assistant" && removed.has(x.hash)).map((x) => x.parent));
    expect(new Set(result.changedKeys)).toEqual(expectedKeys);
  });

  it("Should prune a large subtree in batches too", async () => {
    const { treeId, nodes } = await seed(2, 40);
    // Hang 300 children under path 0's first message, so that one parent has more children than one statement deletes.
    const top = nodes[0].hash;
    const wide = Array.from({ length: 300 }, (_, i) =>
      env.DB.prepare(`INSERT INTO nodes (hash, parent, tree_id, depth, role, message, observations) VALUES (?1, ?2, ?3, 2, 'assistant', '{}', 1)`).bind(
        hex(900_000 + i, 2),
        top,
        treeId,
      ),
    );
    await env.DB.batch(wide);
    const changes: number[] = [];
    const result = await pruneSubtree(watched(env.DB, changes), treeId, top);
    expect(result.nodes).toBe(ROLES.length + 300);
    expect(result.changedKeys).toContain(top);
    expect(Math.max(...changes)).toBeLessThanOrEqual(PRUNE_STATEMENT_ROWS);
    const left = await env.DB.prepare(`SELECT count(*) AS n FROM nodes WHERE tree_id = ?1`).bind(treeId).first<{ n: number }>();
    expect(left?.n).toBe(nodes.length - ROLES.length);
  });
});
