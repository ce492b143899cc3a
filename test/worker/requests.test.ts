import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { RECENT_KEPT, RECENT_KEPT_PER_TREE, recentStatements, type RecentRequest } from "../../src/store/tree/recent-requests";
import { REFUND_TOOLS } from "../../tools/refund-desk";
import { api, learn, newKey, ok, onlyTree } from "./api-helpers";
import { chat, eventually, uniqueModel } from "./helpers";
import { recentRequest } from "../support/recent-request";

interface Recent {
  at: number;
  tree_id: string | null;
  route: string;
  outcome: string;
  status: number;
  latency_ms: number;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  node: string | null;
  template_id: string | null;
  reason: string | null;
  count: number;
  namespace: string | null;
  model: string | null;
}

const ask = (model: string, order: string) => ({ model, tools: REFUND_TOOLS, messages: [{ role: "user", content: `Refund order #${order} please` }] });

/** The tenant's recent requests once at least `n` are listed and `until` holds (rows land with each counter flush). */
async function recent(key: string, n: number, until: (rows: Recent[]) => boolean = () => true): Promise<Recent[]> {
  let rows: Recent[] = [];
  await eventually(async () => {
    rows = (await ok<{ data: Recent[] }>(api(`/requests?limit=50`, { token: key }))).data;
    return rows.length >= n && until(rows);
  });
  return rows;
}

describe("GET /api/requests", () => {
  it("Should list a tenant's last requests, newest first: misses, an exact hit linked to its node, a template hit, a bypass", async () => {
    const key = newKey();
    const model = uniqueModel("recent");
    for (const order of ["A-1", "B-22", "C-333"]) await learn(ask(model, order), key);
    const exact = await chat(ask(model, "A-1"), { key });
    await exact.arrayBuffer();
    expect(exact.headers.get("muscle-mem-cache")).toBe("hit");
    let template: Response | null = null;
    await eventually(async () => {
      template = await chat(ask(model, `D-${Math.floor(Math.random() * 1e6)}`), { key, headers: { "cache-control": "only-if-cached" } });
      await template.arrayBuffer();
      return template.status === 200;
      // Learning runs in the tree's own object after the third recording: on a loaded machine it lands late.
    }, 20_000);
    const bypass = await chat(ask(model, "E-5"), { key, headers: { "cache-control": "no-store" } });
    await bypass.arrayBuffer();
    expect(bypass.headers.get("muscle-mem-cache")).toBe("bypass");
    // A request never keyed to a tree (n > 1): listed with no tree (to its tenant too: docs/api.md), whenever its row lands.
    const unkeyed = await chat({ ...ask(model, "F-6"), n: 2 }, { key });
    await unkeyed.arrayBuffer();
    // Rows land with each counter flush, and two flushes may reach D1 in either order: wait until the hit, the
    // template hit and the bypass are all listed (the template's polls, listed as misses, may fill the count first).
    const listed = await recent(key, 7, (all) => ["hit", "template", "bypass"].every((o) => all.some((r) => r.tree_id !== null && r.outcome === o)));
    const tree = await onlyTree(key);
    // The unkeyed request's row may land before or after the tree's: it is the only one with no tree.
    expect(listed.filter((r) => r.tree_id === null)).toEqual(listed.filter((r) => r.tree_id === null && r.outcome === "bypass" && r.reason === "n > 1"));
    const rows = listed.filter((r) => r.tree_id !== null);
    // Newest first. The template's only-if-cached polls that came before the learner's alarm are listed as
    // misses between the exact hit and the template hit: leave them out of the order.
    expect(
      rows
        .filter((r) => r.outcome !== "miss")
        .map((r) => r.outcome)
        .slice(0, 3),
    ).toEqual(["bypass", "template", "hit"]);
    expect(rows.filter((r) => r.outcome === "miss").length).toBeGreaterThanOrEqual(3);
    const hit = rows.find((r) => r.outcome === "hit");
    const nodes = await ok<{ data: Array<{ hash: string; preview: string }> }>(api(`/trees/${tree.id}/children`, { token: key }));
    const a1 = nodes.data.find((n) => n.preview.includes("A-1"));
    const answers = await ok<{ data: Array<{ hash: string }> }>(api(`/trees/${tree.id}/children?parent=${a1?.hash}`, { token: key }));
    expect(hit).toMatchObject({
      tree_id: tree.id,
      route: "/v1/chat/completions",
      status: 200,
      node: answers.data[0].hash,
      model,
      namespace: "default",
      count: 1,
    });
    expect(hit?.prompt_tokens).toBeGreaterThan(0);
    const served = rows.find((r) => r.outcome === "template");
    expect(served?.template_id).toMatch(/^[0-9a-f]{32}$/);
    expect(served?.node).toBeNull();
    expect(rows.every((r) => r.latency_ms >= 0 && r.at > 0)).toBe(true);
    expect(rows.filter((r) => r.outcome === "miss").every((r) => r.node === null && r.prompt_tokens === null)).toBe(true);
    for (let i = 1; i < rows.length; i++) expect(rows[i - 1].at).toBeGreaterThanOrEqual(rows[i].at);
    expect(rows.every((r) => r.tree_id === tree.id)).toBe(true);
    await eventually(async () => (await ok<{ data: Recent[] }>(api("/requests?limit=200"))).data.some((r) => r.tree_id === null && r.outcome === "bypass"));
    // Its tenant sees it too, with its reason.
    await eventually(async () =>
      (await ok<{ data: Recent[] }>(api("/requests?limit=50", { token: key }))).data.some((r) => r.tree_id === null && r.reason === "n > 1"),
    );
  });

  it("Should never show one tenant another's requests; the admin sees both", async () => {
    const [a, b] = [newKey(), newKey()];
    const model = uniqueModel("recent-iso");
    await learn(ask(model, "A-1"), a);
    await learn(ask(model, "B-2"), b);
    const mine = await recent(a, 1);
    const tree = await onlyTree(a);
    expect(mine.every((r) => r.tree_id === tree.id)).toBe(true);
    const treeB = await onlyTree(b);
    let all: Recent[] = [];
    await eventually(async () => {
      all = (await ok<{ data: Recent[] }>(api("/requests?limit=200"))).data;
      return all.some((r) => r.tree_id === tree.id) && all.some((r) => r.tree_id === treeB.id);
    });
  });

  const recentRow = (i: number, tree: string | null): RecentRequest =>
    recentRequest({ at: i, tree_id: tree, outcome: "miss", latency_ms: 1, prompt_tokens: null, completion_tokens: null, node: null });

  it("Should keep only the newest RECENT_KEPT rows, whatever one flush writes", async () => {
    // Spread over enough trees that no tree passes its own cap: the database's cap is what trims.
    const trees = Math.ceil((RECENT_KEPT + 25) / RECENT_KEPT_PER_TREE) + 1;
    await env.DB.batch(
      recentStatements(
        env.DB,
        Array.from({ length: RECENT_KEPT + 25 }, (_, i) => recentRow(1e15 + i, `cap-${i % trees}`)),
      ),
    );
    const count = await env.DB.prepare("SELECT count(*) AS n, min(at) AS oldest FROM recent_requests").first<{ n: number; oldest: number }>();
    expect(count?.n).toBe(RECENT_KEPT);
    expect(count?.oldest).toBe(1e15 + 25);
  });

  it("Should keep each tree's newest RECENT_KEPT_PER_TREE rows, so that one busy tree never pushes another's history out", async () => {
    const quiet = `quiet-${crypto.randomUUID()}`;
    const busy = `busy-${crypto.randomUUID()}`;
    await env.DB.batch(recentStatements(env.DB, [recentRow(2e15, quiet)]));
    // The busy tree writes more rows than the whole database keeps.
    const flushes = Math.ceil((RECENT_KEPT + 1) / RECENT_KEPT_PER_TREE);
    for (let flush = 0; flush < flushes; flush++) {
      await env.DB.batch(
        recentStatements(
          env.DB,
          Array.from({ length: RECENT_KEPT_PER_TREE }, (_, i) => recentRow(2e15 + 1 + flush * RECENT_KEPT_PER_TREE + i, busy)),
        ),
      );
    }
    const counts = (tree: string) =>
      env.DB.prepare("SELECT count(*) AS n, min(at) AS oldest FROM recent_requests WHERE tree_id = ?").bind(tree).first<{ n: number; oldest: number }>();
    expect(await counts(quiet)).toEqual({ n: 1, oldest: 2e15 });
    expect(await counts(busy)).toEqual({ n: RECENT_KEPT_PER_TREE, oldest: 2e15 + 1 + (flushes - 1) * RECENT_KEPT_PER_TREE });
  });

  it("Should answer 400 for a bad limit and 401 without a credential", async () => {
    expect((await api("/requests?limit=0", { token: newKey() })).status).toBe(400);
    expect((await api("/requests", { token: null })).status).toBe(401);
  });
});
