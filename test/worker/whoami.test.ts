import { describe, expect, it } from "vitest";
import { tenantOf } from "../../src/core/hash";
import { api, learn, newKey, ok, type Tree } from "./api-helpers";
import { uniqueModel } from "./helpers";

interface Whoami {
  role: "admin" | "tenant";
  tenant?: string;
  short?: string;
  trees: number;
  tenants?: number;
  by_tenant?: Array<{ tenant: string; short: string; trees: number }>;
}

const ask = (model: string) => ({ model, messages: [{ role: "user", content: `who am I ${crypto.randomUUID()}` }] });

describe("GET /api/whoami", () => {
  it("Should name a tenant key's tenant (short hash) and count its trees", async () => {
    const key = newKey();
    await learn(ask(uniqueModel()), key);
    await learn(ask(uniqueModel()), key);
    const me = await ok<Whoami>(api("/whoami", { token: key }));
    const tenant = tenantOf(`Bearer ${key}`);
    expect(me).toEqual({ role: "tenant", tenant, short: tenant.slice(0, 8), trees: 2 });
  });

  it("Should say a key with no trees has none (a mistyped admin token looks like this)", async () => {
    expect(await ok<Whoami>(api("/whoami", { token: "dev-admin-tokn" }))).toMatchObject({ role: "tenant", trees: 0 });
  });

  it("Should tell the admin it sees every tenant, with each tenant's tree count", async () => {
    const key = newKey();
    await learn(ask(uniqueModel()), key);
    const me = await ok<Whoami>(api("/whoami"));
    expect(me.role).toBe("admin");
    expect(me.tenant).toBeUndefined();
    expect(me.trees).toBeGreaterThanOrEqual(1);
    expect(me.by_tenant?.reduce((n, t) => n + t.trees, 0)).toBeLessThanOrEqual(me.trees);
    expect(me.tenants).toBe(me.by_tenant?.length);
  });

  it("Should answer 401 without a credential", async () => {
    expect((await api("/whoami", { token: null })).status).toBe(401);
  });
});

describe("GET /api/trees?tenant=", () => {
  it("Should let the admin narrow the list to one tenant, and never widen a tenant key's view", async () => {
    const [a, b] = [newKey(), newKey()];
    await learn(ask(uniqueModel()), a);
    await learn(ask(uniqueModel()), b);
    const tenantA = tenantOf(`Bearer ${a}`);
    const only = await ok<{ data: Tree[] }>(api(`/trees?tenant=${tenantA}&limit=200`));
    expect(only.data.length).toBe(1);
    expect(only.data.every((t) => t.tenant === tenantA)).toBe(true);
    expect((await ok<{ data: Tree[] }>(api(`/trees?tenant=${tenantA}`, { token: b }))).data).toEqual([]);
    expect((await ok<{ data: Tree[] }>(api(`/trees?tenant=${tenantOf(`Bearer ${b}`)}`, { token: b }))).data).toHaveLength(1);
    expect((await api("/trees?tenant=ab12", { token: b })).status).toBe(400);
  });
});
