import { describe, expect, it } from "vitest";
import { apiRoutes } from "../../src/http/api";
import { ADMIN, api, learn, newKey, onlyTree } from "./api-helpers";
import { uniqueModel } from "./helpers";

const UNKNOWN = "0123456789abcdef0123456789abcdef";

/** A query a route needs to get past its own validation (a route missing here answers 400 and fails the test). */
const QUERY: Record<string, string> = { "/trees/:treeId/search": "?q=refund" };

/** Admin-only routes: a tenant key gets 403 whatever the tree, so they leak nothing either. */
const ADMIN_ONLY = new Set(["POST /trees/:treeId/move"]);

/** Every route of the API that names a tree in its path, read from the router itself (a new route is covered by itself). */
function treeRoutes(): Array<{ method: string; path: string }> {
  // Hono lists a route once per handler (its middleware too): one entry per method and path.
  const named = apiRoutes()
    .routes.filter((r) => r.method !== "ALL" && r.path.includes(":treeId"))
    .map((r) => [`${r.method} ${r.path}`, { method: r.method, path: r.path }] as const);
  return [...new Map(named).values()];
}

async function call(route: { method: string; path: string }, treeId: string, token: string): Promise<{ status: number; body: string }> {
  const path = `${route.path.replace(":treeId", treeId)}${QUERY[route.path] ?? ""}`;
  const res = await api(path, { token, method: route.method, body: route.method === "GET" ? undefined : { to: "DB" } });
  return { status: res.status, body: await res.text() };
}

describe("the one tree check (src/http/api/tree-access.ts)", () => {
  it("Should answer another tenant's tree exactly like an unknown one (404, same body) on every :treeId route", async () => {
    const owner = newKey();
    await learn({ model: uniqueModel("access"), messages: [{ role: "user", content: "Refund order #T-1" }] }, owner);
    const tree = await onlyTree(owner);
    const thief = newKey();
    const routes = treeRoutes();
    expect(routes.map((r) => `${r.method} ${r.path}`)).toContain("GET /trees/:treeId/search");
    expect(routes.length).toBeGreaterThanOrEqual(6);
    for (const route of routes) {
      const name = `${route.method} ${route.path}`;
      const foreign = await call(route, tree.id, thief);
      const unknown = await call(route, UNKNOWN, thief);
      expect(foreign, name).toEqual(unknown);
      expect(foreign.status, name).toBe(ADMIN_ONLY.has(name) ? 403 : 404);
      if (ADMIN_ONLY.has(name)) continue;
      expect((await call(route, tree.id, owner)).status, `${name} for the owner`).toBe(200);
      expect((await call(route, tree.id, ADMIN)).status, `${name} for the admin`).toBe(200);
    }
  });

  it("Should check the body's tree_id of POST /api/prune and a node's tree the same way", async () => {
    const owner = newKey();
    await learn({ model: uniqueModel("access"), messages: [{ role: "user", content: "Refund order #T-2" }] }, owner);
    const tree = await onlyTree(owner);
    const thief = newKey();
    const prune = (treeId: string, token: string) => api("/prune", { token, method: "POST", body: { min_hits: 1_000_000, tree_id: treeId, dry_run: true } });
    const foreign = await prune(tree.id, thief);
    const unknown = await prune(UNKNOWN, thief);
    expect(foreign.status).toBe(404);
    expect(await foreign.text()).toBe(await unknown.text());
    expect((await prune(tree.id, owner)).status).toBe(200);
    const level = (await (await api(`/trees/${tree.id}/children`, { token: owner })).json()) as { data: Array<{ hash: string }> };
    const node = level.data[0].hash;
    const preview = await api(`/nodes/${node}/prune`, { token: thief });
    expect(preview.status).toBe(404);
    expect(await preview.text()).toBe(await (await api(`/nodes/${UNKNOWN}/prune`, { token: thief })).text());
    expect((await api(`/nodes/${node}/prune`, { token: owner })).status).toBe(200);
  });

  it("Should say which of tree and parent is missing on children only for a tree the caller may see", async () => {
    const owner = newKey();
    await learn({ model: uniqueModel("access"), messages: [{ role: "user", content: "Refund order #T-3" }] }, owner);
    const tree = await onlyTree(owner);
    const res = await api(`/trees/${tree.id}/children?parent=${UNKNOWN}`, { token: owner });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { message: string } }).error.message).toBe("No such node in this tree.");
  });
});
