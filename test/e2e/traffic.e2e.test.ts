import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTrafficModel, trafficWorkloads } from "../../tools/traffic/model";
import { probe, sendTraffic, TRAFFIC_KEY, type TrafficPart } from "../../tools/traffic/run";
import type { ScriptedModel } from "../../tools/scripted-model";
import { freePort, startWranglerDev, type WranglerDev } from "../support/wrangler-dev";

interface Tree {
  id: string;
  namespace: string;
  model: string;
  node_count: number;
  hits: number;
}
interface Child {
  hash: string;
  child_count?: number;
}

let model: ScriptedModel;
let dev: WranglerDev;
let parts: TrafficPart[];

async function api<T>(path: string, token = "dev-admin-token"): Promise<T> {
  const res = await fetch(`${dev.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status, path).toBe(200);
  return (await res.json()) as T;
}

/** The largest fan-out under any node of the tree, walking it level by level. */
async function widestFanOut(treeId: string): Promise<number> {
  let widest = 0;
  let level: Array<string | undefined> = [undefined];
  for (let depth = 0; depth < 12 && level.length > 0; depth++) {
    const next: string[] = [];
    for (const parent of level) {
      const page = await api<{ data: Child[] }>(`/api/trees/${treeId}/children?limit=500${parent ? `&parent=${parent}` : ""}`);
      widest = Math.max(widest, page.data.length);
      next.push(...page.data.filter((c) => (c.child_count ?? 0) > 0).map((c) => c.hash));
    }
    level = next;
  }
  return widest;
}

async function eventually<T>(read: () => Promise<T>, ok: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await read();
    if (ok(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 500));
  }
}

describe("npm run traffic (scripts/traffic.ts) into a Worker pointed at its scripted model", () => {
  beforeAll(async () => {
    model = await startTrafficModel({ port: await freePort() });
    dev = await startWranglerDev({ vars: { UPSTREAM_BASE_URL: model.url } });
    expect(await probe(dev.url, model)).toEqual({ ok: true });
    parts = await sendTraffic(dev.url, trafficWorkloads(), { seed: 1 });
  }, 300_000);

  afterAll(async () => {
    await dev?.stop();
    await model?.close();
  });

  it("Should serve every part without a wrong answer, with exact, declared and learned hits", () => {
    const by = Object.fromEntries(parts.map((p) => [p.namespace, p]));
    for (const p of parts) expect(p.wrong, p.name).toBe(0);
    expect(by["order-desk"].served.learned).toBeGreaterThan(0);
    expect(by["order-desk"].served.exact).toBeGreaterThan(0);
    expect(by["refund-desk-declared"].served.declared).toBeGreaterThan(0);
    expect(by["tau-bench"].served.exact).toBe(by["tau-bench"].requests / 2);
  });

  it("Should leave trees with branches, learned templates and hits that the admin and the traffic key see in /api", async () => {
    const trees = (await api<{ data: Tree[] }>("/api/trees?limit=200")).data;
    expect(new Set(trees.map((t) => t.namespace))).toEqual(new Set(["order-desk", "signup-intake", "refund-desk-declared", "tau-bench"]));
    expect(trees.filter((t) => t.namespace === "tau-bench")).toHaveLength(2);
    const own = (await api<{ data: Tree[] }>("/api/trees?limit=200", TRAFFIC_KEY)).data;
    expect(own.map((t) => t.id).sort()).toEqual(trees.map((t) => t.id).sort());

    const orders = trees.find((t) => t.namespace === "order-desk") as Tree;
    const intakeTree = trees.find((t) => t.namespace === "signup-intake") as Tree;
    // The order desk branches on status (delivered, shipped, processing, missing), the intake on its form.
    expect(await widestFanOut(orders.id)).toBeGreaterThanOrEqual(3);
    expect(await widestFanOut(intakeTree.id)).toBeGreaterThanOrEqual(3);

    const templates = await eventually(
      () => api<{ data: Array<{ confirmed: boolean; bindings: number; hits: number }> }>(`/api/trees/${orders.id}/templates`),
      (t) => t.data.some((x) => x.confirmed && x.hits > 0),
    );
    expect(templates.data.some((x) => x.confirmed && x.bindings >= 3 && x.hits > 0)).toBe(true);

    // Hit counters reach D1 in batches (eventually): wait for them, then they must not exceed what was served.
    const served = parts.reduce((n, p) => n + p.served.exact + p.served.declared + p.served.learned, 0);
    const stats = await eventually(
      () => api<{ overall: { hits: number; misses: number } }>("/api/stats"),
      (s) => s.overall.hits >= served,
    );
    expect(stats.overall.hits).toBeGreaterThan(0);
    expect(stats.overall.hits).toBeLessThanOrEqual(served);
    expect(stats.overall.misses).toBeGreaterThan(0);
  });

  it("Should tell the user how to restart when the Worker sends its misses elsewhere, or when no Worker answers", async () => {
    const other = await startTrafficModel({ port: await freePort() });
    try {
      const elsewhere = await probe(dev.url, other);
      expect(elsewhere.ok).toBe(false);
      if (!elsewhere.ok) expect(elsewhere.problem).toContain("npm start -- --var UPSTREAM_BASE_URL:http://127.0.0.1:9911/v1");
      const nobody = await probe(`http://127.0.0.1:${await freePort()}`, other);
      expect(nobody.ok).toBe(false);
      if (!nobody.ok) expect(nobody.problem).toContain("npm run start:demo");
    } finally {
      await other.close();
    }
  });
});
