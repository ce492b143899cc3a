import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { withLogContext } from "../../src/observability/log-event";
import { loggedStoreWork, meteredEnv, newStoreCost, runMetered, storeTimingEntries } from "../../src/observability/store-meter";
import { RECENT_KEPT_PER_TREE, recentStatements, type RecentRequest } from "../../src/store/tree/recent-requests";
import { emptyTally, tallyStatements } from "../../src/store/tree/tally-batch";
import { chat, recorded, uniqueModel } from "./helpers";
import { newKey } from "./api-helpers";
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

/** The `d1rows` entry of a response's `server-timing`: the billed rows of its D1 work before the response. */
function d1Rows(res: Response): { r: number; w: number } {
  const m = /d1rows;desc="r=(\d+) w=(\d+)"/.exec(res.headers.get("server-timing") ?? "");
  if (!m) throw new Error(`no d1rows entry in '${res.headers.get("server-timing")}'`);
  return { r: Number(m[1]), w: Number(m[2]) };
}

describe("the store meter sums D1's own meta (server-timing d1rows, store_work lines)", () => {
  afterEach(() => vi.restoreAllMocks());

  it("Should sum rows_read and rows_written of run, all, first and each statement of a batch as D1's own meta says, with no query of its own", async () => {
    const db = meteredEnv(env).DB;
    const { treeId, node } = await seedTree();
    const cost = newStoreCost();
    const results: D1Result[] = [];
    await runMetered(cost, async () => {
      const insert = "INSERT INTO nodes (hash, parent, tree_id, depth, role, message) VALUES (?1, 'p', ?2, 1, 'assistant', '{}')";
      results.push(await db.prepare(insert).bind(crypto.randomUUID(), treeId).run());
      results.push(await db.prepare("SELECT hash FROM nodes WHERE tree_id = ?1").bind(treeId).all());
      results.push(
        ...(await db.batch([
          db.prepare("UPDATE nodes SET hits = hits + 1 WHERE hash = ?1").bind(node),
          db.prepare("SELECT hits FROM nodes WHERE hash = ?1").bind(node),
        ])),
      );
    });
    const sum = (k: "rows_read" | "rows_written") => results.reduce((n, r) => n + r.meta[k], 0);
    expect(cost.d1).toMatchObject({ queries: 4, rowsRead: sum("rows_read"), rowsWritten: sum("rows_written") });
    // The insert's 4 (its row and index entries) and the update's 1.
    expect(cost.d1.rowsWritten).toBe(5);
    // `first()` has no meta: the meter runs it as `all()` (one query) and counts that result's rows; a point read is 1 row.
    const before = { ...cost.d1 };
    const row = await runMetered(cost, () => db.prepare("SELECT hits FROM nodes WHERE hash = ?1").bind(node).first<{ hits: number }>());
    expect(row).toEqual({ hits: 1 });
    expect(await runMetered(cost, () => db.prepare("SELECT hits FROM nodes WHERE hash = ?1").bind("absent").first())).toBeNull();
    expect(cost.d1.queries - before.queries).toBe(2);
    expect(cost.d1.rowsRead - before.rowsRead).toBe(1);
  });

  it("Should log D1 work after the response's server-timing was built as a worker.after_response store_work line, with its rows", async () => {
    const lines: string[] = [];
    vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(" ")));
    const db = meteredEnv(env).DB;
    const { node } = await seedTree();
    const cost = newStoreCost();
    await withLogContext({ requestId: "r-after", level: "debug" }, () =>
      runMetered(cost, async () => {
        await db.prepare("SELECT hits FROM nodes WHERE hash = ?1").bind(node).all();
        expect(storeTimingEntries(cost)).toContain(`d1rows;desc="r=1 w=0"`);
        // After the header: a waitUntil's update.
        await db.prepare("UPDATE nodes SET hits = hits + 1 WHERE hash = ?1").bind(node).run();
      }),
    );
    const work = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((e) => e.event === "store_work");
    expect(work).toEqual([expect.objectContaining({ object: "worker", call: "after_response", request_id: "r-after", d1_queries: 1, d1_rows_written: 1 })]);
  });

  it("Should say a request's billed rows in server-timing: a miss writes nothing before its response, a warm hit reads and writes nothing", async () => {
    const key = newKey();
    const body = { model: uniqueModel("rows"), messages: [{ role: "user", content: `rows ${crypto.randomUUID()}` }] };
    const miss = await chat(body, { key });
    await miss.arrayBuffer();
    expect(miss.headers.get("muscle-mem-cache")).toBe("miss");
    // The object's lookup reads; the recording is after the response, not in the header.
    expect(d1Rows(miss).w).toBe(0);
    await recorded(body, { key });
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 1 });
    try {
      await (await chat(body, { key })).arrayBuffer();
      const warm = await chat(body, { key });
      await warm.arrayBuffer();
      expect(warm.headers.get("muscle-mem-cache")).toBe("hit");
      expect(d1Rows(warm)).toEqual({ r: 0, w: 0 });
    } finally {
      vi.useRealTimers();
    }
  });

  it("Should log a tally flush's billed rows: the tree row, a row per node, the recent-requests insert and its trims", async () => {
    const lines: string[] = [];
    vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(" ")));
    const { treeId, node } = await seedTree();
    const db = meteredEnv(env).DB;
    const tally = emptyTally(treeId);
    tally.tree = { hits: 3, bypasses: 0, promptTokens: 1, completionTokens: 1, latencyMs: 1, lastHitAt: 5 };
    tally.nodes[node] = { hits: 3, lastHitAt: 5 };
    const recent = { at: 5, tree_id: treeId, route: "/v1/chat/completions", status: 200, latency_ms: 1, prompt_tokens: 1, completion_tokens: 1 };
    const none = { template_id: null, reason: null, request_id: null, explanation: null, error: null, tenant: null };
    tally.recent = [
      { ...recent, ...none, outcome: "hit", node, count: 3 },
      { ...recent, ...none, outcome: "miss", node: null, count: 1 },
    ];
    await loggedStoreWork("debug", "tally", "flush", () => db.batch(tallyStatements(db, [tally])));
    const work = lines.map((l) => JSON.parse(l) as Record<string, number>).find((e) => String(e.event) === "store_work");
    console.info(
      `billed rows: tally flush (tree, 1 node, 2 recent rows, 2 trims) ${work?.d1_rows_written} written, ${work?.d1_rows_read} read, ${work?.d1_queries} queries`,
    );
    // tree 2 + node 1 + each recent row with its key, tree index and request index (3 or 4 each); the trims delete nothing here.
    expect(work?.d1_queries).toBe(5);
    expect(work?.d1_rows_written).toBeGreaterThanOrEqual(3 + 2 * 3);
    expect(work?.d1_rows_written).toBeLessThanOrEqual(3 + 2 * 4 + 1);
  });
});

describe("billed rows of the recent-requests table", () => {
  it("Should bill a recent-requests row's insert for the row and its index entries, and its trim's delete as one row", async () => {
    const tree = crypto.randomUUID().replaceAll("-", "");
    const row = (i: number): RecentRequest => ({
      at: i,
      tree_id: tree,
      route: "/v1/chat/completions",
      outcome: "miss",
      status: 200,
      latency_ms: 1,
      prompt_tokens: null,
      completion_tokens: null,
      node: null,
      template_id: null,
      reason: null,
      count: 1,
      request_id: `r-${i}`,
      explanation: null,
      error: null,
      tenant: null,
    });
    const [one] = await env.DB.batch(recentStatements(env.DB, [row(0)]));
    // One more than the per-tree cap: the tree's trim deletes exactly one row.
    const results = await env.DB.batch(
      recentStatements(
        env.DB,
        Array.from({ length: RECENT_KEPT_PER_TREE }, (_, i) => row(i + 1)),
      ),
    );
    const trim = results[1];
    console.log(
      `billed rows: recent row insert ${one.meta.rows_written} written; per-tree trim of 1 row ${trim.meta.rows_written} written, ${trim.meta.rows_read} read`,
    );
    // The row (its id is the rowid), recent_requests_tree_idx, recent_requests_request_idx and AUTOINCREMENT's sqlite_sequence row.
    expect(one.meta.rows_written).toBeLessThanOrEqual(4);
    // A delete is billed one row written per row deleted; its read walks the tree's kept rows (RECENT_KEPT_PER_TREE) through the index.
    expect(trim.meta.rows_written).toBe(1);
    expect(trim.meta.rows_read).toBeLessThanOrEqual(RECENT_KEPT_PER_TREE + 5);
  });
});
