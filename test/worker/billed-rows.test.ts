import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { emptyTally, tallyStatements } from "../../src/store/tree/tally-batch";
import { freshId, NODE_INSERT, seedTree } from "./tally.support";

/**
 * What D1 bills for the writes this branch adds or reshapes, read from D1's own `meta.rows_written` /
 * `meta.rows_read` (every index entry a write touches is billed as a row written). The numbers are the
 * ones docs/capacity.md "Billed rows of the hit counters and key checks" cites; the bounds fail the test if
 * a schema change makes them grow.
 */

describe("billed rows, from D1's own meta", () => {
  it("Should bill a node insert for each of its index entries, and a tally's node update as one row", async () => {
    const insert = await env.DB.prepare(NODE_INSERT).bind(freshId(), freshId()).run();
    // The row, its primary key, nodes_parent_idx and nodes_tree_idx.
    expect(insert.meta.rows_written).toBe(4);

    const { treeId: tree, node } = await seedTree();
    const tally = emptyTally(tree);
    tally.tree = { hits: 3, bypasses: 0, promptTokens: 1, completionTokens: 1, latencyMs: 1, lastHitAt: 5 };
    tally.nodes[node] = { hits: 3, lastHitAt: 5 };
    const [treeUpdate, nodeUpdate] = tallyStatements(env.DB, [tally]);
    const results = await env.DB.batch([treeUpdate, nodeUpdate]);
    const written = results.map((r) => r.meta.rows_written);
    // The tree row moves in trees_tenant_idx (tenant, last_hit_at): its update is billed for the index too.
    expect(written[0]).toBeLessThanOrEqual(3);
    // A node's counters are in no index: one row written per node per flush.
    expect(written[1]).toBe(1);
    expect(results[1].meta.rows_read).toBe(1);
    console.log(
      `billed rows: node insert ${insert.meta.rows_written} written; tally tree update ${written[0]} written; tally node update ${written[1]} written, ${results[1].meta.rows_read} read`,
    );
  });

  it("Should bill a key's acceptance as one row written, and its check as one row read", async () => {
    const tenant = freshId();
    const upsert =
      "INSERT INTO credential_checks (tenant, accepted_at) VALUES (?1, ?2) ON CONFLICT (tenant) DO UPDATE SET accepted_at = max(accepted_at, excluded.accepted_at)";
    const first = await env.DB.prepare(upsert).bind(tenant, 1).run();
    const again = await env.DB.prepare(upsert).bind(tenant, 2).run();
    const read = await env.DB.prepare("SELECT accepted_at AS at FROM credential_checks WHERE tenant = ?1").bind(tenant).run();
    console.log(
      `billed rows: credential insert ${first.meta.rows_written}, renewal ${again.meta.rows_written} written; check read ${read.meta.rows_read} read`,
    );
    expect(first.meta.rows_written).toBeLessThanOrEqual(2);
    expect(again.meta.rows_written).toBeLessThanOrEqual(2);
    expect(read.meta.rows_read).toBe(1);
  });
});
