import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { callerOf, sameSecret } from "../../src/http/auth/caller";
import { tenantOf } from "../../src/core/hash";
import { api, learn, newKey, ok, onlyTree, storedCount, type NodeSummary, importFor } from "./api-helpers";
import { chat, uniqueModel } from "./helpers";

/** A tenant with one learned answer: its key, tree and answer node. */
async function tenantWithAnswer() {
  const key = newKey();
  const model = uniqueModel();
  const body = { model, messages: [{ role: "user", content: "Refund order #S-1" }] };
  await learn(body, key);
  const tree = await onlyTree(key);
  const level = await ok<{ data: NodeSummary[] }>(api(`/trees/${tree.id}/children`, { token: key }));
  const answers = await ok<{ data: NodeSummary[] }>(api(`/trees/${tree.id}/children?parent=${level.data[0].hash}`, { token: key }));
  return { key, body, tree, user: level.data[0], answer: answers.data[0] };
}

describe("trajectory API: authentication", () => {
  it("Should answer 401 in the error envelope without a usable bearer credential", async () => {
    const variants: Array<Record<string, string>> = [{}, { authorization: "Basic abc" }, { authorization: "Bearer " }, { authorization: "test-admin-token" }];
    for (const headers of variants) {
      const res = await exports.default.fetch(new Request("http://mm.test/api/trees", { headers }));
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: { code: string; type: string } }).error).toMatchObject({ code: "unauthorized", type: "authentication_error" });
    }
    expect((await api("/stats", { token: null })).status).toBe(401);
    expect((await api("/prune", { token: null, method: "POST", body: { min_hits: 1 } })).status).toBe(401);
    expect((await api("/import", { token: null, method: "POST", body: "{}" })).status).toBe(401);
  });

  it("Should treat a wrong admin token as an ordinary key: its own empty tenant, never everyone's", async () => {
    await tenantWithAnswer();
    const wrong = await ok<{ data: unknown[] }>(api("/trees", { token: "test-admin-tokem" }));
    expect(wrong.data).toEqual([]);
    const admin = await ok<{ data: unknown[] }>(api("/trees"));
    expect(admin.data.length).toBeGreaterThan(0);
  });

  it("Should compare the admin token in constant time over fixed-length digests", () => {
    expect(sameSecret("test-admin-token", "test-admin-token")).toBe(true);
    expect(sameSecret("test-admin-token-longer", "test-admin-token")).toBe(false);
    expect(sameSecret("", "")).toBe(false);
    expect(callerOf("Bearer test-admin-token", env.ADMIN_TOKEN)).toMatchObject({ admin: true });
    expect(callerOf("Bearer sk-x", env.ADMIN_TOKEN)).toEqual({ admin: false, tenant: tenantOf("Bearer sk-x") });
  });
});

describe("trajectory API: tenants are isolated", () => {
  it("Should not let one tenant list, read, walk or export another tenant's tree (404, never 403)", async () => {
    const victim = await tenantWithAnswer();
    const thief = newKey();
    expect((await ok<{ data: unknown[] }>(api("/trees", { token: thief }))).data).toEqual([]);
    for (const path of [
      `/trees/${victim.tree.id}`,
      `/trees/${victim.tree.id}/children`,
      `/trees/${victim.tree.id}/children?parent=${victim.user.hash}`,
      `/trees/${victim.tree.id}/export`,
      `/nodes/${victim.answer.hash}`,
      `/nodes/${victim.answer.hash}/path`,
      `/stats?tree_id=${victim.tree.id}`,
    ]) {
      const res = await api(path, { token: thief });
      expect(res.status, path).toBe(404);
    }
    const stats = await ok<{ overall: { trees: number; hits: number } }>(api("/stats", { token: thief }));
    expect(stats.overall).toMatchObject({ trees: 0, hits: 0 });
  });

  it("Should not let one tenant prune another tenant's node or tree", async () => {
    const victim = await tenantWithAnswer();
    const thief = newKey();
    expect((await api(`/nodes/${victim.user.hash}`, { token: thief, method: "DELETE" })).status).toBe(404);
    expect((await api("/prune", { token: thief, method: "POST", body: { min_hits: 1_000_000, tree_id: victim.tree.id } })).status).toBe(404);
    const everywhere = await ok<{ nodes: number }>(api("/prune", { token: thief, method: "POST", body: { min_hits: 1_000_000 } }));
    expect(everywhere.nodes).toBe(0);
    expect(await storedCount(victim.tree.id)).toBe(2);
    const still = await chat(victim.body, { key: victim.key, headers: { "cache-control": "only-if-cached" } });
    expect(still.status).toBe(200);
  });

  it("Should not let a key import into another tenant, nor read a tree seeded for someone else", async () => {
    const victim = newKey();
    const line = JSON.stringify({
      model: "m-sec-import",
      messages: [
        { role: "user", content: "q" },
        { role: "assistant", content: "poisoned" },
      ],
    });
    const res = await api(`/import?tenant=${tenantOf(`Bearer ${victim}`)}`, { token: newKey(), method: "POST", body: line });
    expect(res.status).toBe(400);
    expect((await ok<{ data: unknown[] }>(api("/trees", { token: victim }))).data).toEqual([]);
    const poisoned = await chat(
      { model: "m-sec-import", messages: [{ role: "user", content: "q" }] },
      { key: victim, headers: { "cache-control": "only-if-cached" } },
    );
    expect(poisoned.status).toBe(504);
  });

  it("Should not let one tenant's import serve another tenant's identical request", async () => {
    const seeder = newKey();
    const model = uniqueModel();
    const line = JSON.stringify({
      model,
      messages: [
        { role: "user", content: "same" },
        { role: "assistant", content: "seeded" },
      ],
    });
    await ok(importFor(seeder, { body: line }));
    const other = await chat({ model, messages: [{ role: "user", content: "same" }] }, { key: newKey(), headers: { "cache-control": "only-if-cached" } });
    expect(other.status).toBe(504);
  });
});

describe("trajectory API: response headers", () => {
  it("Should send nosniff, no-store and a deny-all CSP on every /api response: JSON, the export's JSONL of recorded text, and errors", async () => {
    const { key, tree } = await tenantWithAnswer();
    const responses = [
      await api("/trees", { token: key }),
      await api(`/trees/${tree.id}/export`, { token: key }),
      await api("/trees", { token: null }),
      await api(`/trees/${"0".repeat(32)}`, { token: key }),
      await importFor(key, { body: "{not json" }),
    ];
    for (const res of responses) {
      await res.arrayBuffer();
      expect([res.status, res.headers.get("x-content-type-options")]).toEqual([res.status, "nosniff"]);
      expect(res.headers.get("cache-control")).toBe("no-store");
      expect(res.headers.get("content-security-policy")).toBe("default-src 'none'; frame-ancestors 'none'");
      expect(res.headers.get("access-control-allow-origin")).toBeNull();
    }
  });
});
