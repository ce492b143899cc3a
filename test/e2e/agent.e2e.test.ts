import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { refundDeskScript } from "../../tools/refund-desk";
import { runRefundAgent, type Order } from "../../tools/refund-agent";
import { startScriptedModel, type ScriptedModel } from "../../tools/scripted-model";
import { startWranglerDev, type WranglerDev } from "../support/wrangler-dev";

let model: ScriptedModel;
let dev: WranglerDev;

const world = (status = "delivered"): Record<string, Order> => ({ "A-1": { order_id: "A-1", status, amount: 42.5 } });
const client = (key: string, namespace: string) =>
  new OpenAI({ apiKey: key, baseURL: `${dev.url}/v1`, maxRetries: 0, defaultHeaders: { "muscle-mem-namespace": namespace } });

beforeAll(async () => {
  model = await startScriptedModel({ script: refundDeskScript, delayMs: 20 });
  // "log": the Worker's event lines, so that the herd test can count fast-miss duplicates.
  dev = await startWranglerDev({ vars: { UPSTREAM_BASE_URL: model.url }, logLevel: "log" });
});

/** How many `fast_miss_duplicate` events the Worker logged so far (src/engine/fast-miss.ts). */
const fastMissDuplicates = (): number => dev.output().split('"event":"fast_miss_duplicate"').length - 1;

afterAll(async () => {
  await dev?.stop();
  await model?.close();
});

/**
 * The second run of an agent may start before the first run's last recording lands (it is written after the
 * response): waits until the same run is served whole from the tree, asking with `only-if-cached` (a turn not
 * recorded yet is a 504, never a model call), so no wait depends on how busy the machine is.
 */
async function settle(key: string, namespace: string, status = "delivered", stream = false): Promise<void> {
  await servedWhole(key, namespace, "A-1", world(status), stream, "the first run's turns were not all recorded");
}

/** Waits until a run for `orderId` is served whole without the model (`only-if-cached`: a turn it cannot serve is a 504). */
async function servedWhole(key: string, namespace: string, orderId: string, orders: Record<string, Order>, stream: boolean, what: string): Promise<void> {
  const onlyCached = new OpenAI({
    apiKey: key,
    baseURL: `${dev.url}/v1`,
    maxRetries: 0,
    defaultHeaders: { "muscle-mem-namespace": namespace, "cache-control": "only-if-cached" },
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    const run = await runRefundAgent(onlyCached, orderId, structuredClone(orders), { stream }).catch(() => null);
    if (run?.outcomes.every((o) => o === "hit")) return;
    if (Date.now() > deadline) throw new Error(`${namespace}: ${what} within 60 s`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("a tool-calling agent with the official openai client, through wrangler dev", () => {
  for (const stream of [false, true]) {
    it(`Should miss, then hit every turn with the same tool effects (stream: ${stream})`, async () => {
      const ns = `agent-${stream}`;
      const before = model.generations();
      const first = await runRefundAgent(client("sk-alice", ns), "A-1", world(), { stream });
      expect(first.outcomes).toEqual(["miss", "miss", "miss"]);
      expect(first.effects).toEqual(["get_order A-1", "refund A-1 42.5"]);
      const generated = model.generations() - before;
      expect(generated).toBe(3);
      await settle("sk-alice", ns, "delivered", stream);
      const second = await runRefundAgent(client("sk-alice", ns), "A-1", world(), { stream });
      expect(second.outcomes).toEqual(["hit", "hit", "hit"]);
      expect(second.effects).toEqual(first.effects);
      expect(second.final).toBe(first.final);
      expect(model.generations() - before).toBe(3);
    });
  }

  it("Should serve a streamed run from what a non-streamed run recorded", async () => {
    await runRefundAgent(client("sk-alice", "mixed"), "A-1", world(), { stream: false });
    await settle("sk-alice", "mixed");
    const streamed = await runRefundAgent(client("sk-alice", "mixed"), "A-1", world(), { stream: true });
    expect(streamed.outcomes).toEqual(["hit", "hit", "hit"]);
  });

  it("Should branch when a tool result changes, and then serve both branches", async () => {
    await runRefundAgent(client("sk-alice", "branch"), "A-1", world("delivered"));
    await settle("sk-alice", "branch");
    const shipped = await runRefundAgent(client("sk-alice", "branch"), "A-1", world("shipped"));
    expect(shipped.outcomes).toEqual(["hit", "miss"]);
    expect(shipped.effects).toEqual(["get_order A-1"]);
    expect(shipped.final).toContain("shipped");
    await settle("sk-alice", "branch", "shipped");
    expect((await runRefundAgent(client("sk-alice", "branch"), "A-1", world("shipped"))).outcomes).toEqual(["hit", "hit"]);
    expect((await runRefundAgent(client("sk-alice", "branch"), "A-1", world("delivered"))).outcomes).toEqual(["hit", "hit", "hit"]);
  });

  it("Should serve a new order's id and amount from a template learned on three others (npm run demo's runs 6-9)", async () => {
    const order = (id: string, amount: number): Record<string, Order> => ({ [id]: { order_id: id, status: "delivered", amount } });
    for (const [id, amount] of [
      ["B-2", 18],
      ["C-3", 99.9],
      ["D-4", 7.25],
    ] as const) {
      await runRefundAgent(client("sk-alice", "templated"), id, order(id, amount));
      await servedWhole("sk-alice", "templated", id, order(id, amount), false, `${id}'s turns were not all recorded`);
    }
    // E-5 was never sent: the turns are served once the tree's learner has learned its templates (in its alarm).
    await servedWhole("sk-alice", "templated", "E-5", order("E-5", 61), false, "no template served a new order's turns");
    const before = model.generations();
    const fourth = await runRefundAgent(client("sk-alice", "templated"), "E-5", order("E-5", 61));
    expect(fourth.outcomes).toEqual(["hit", "hit", "hit"]);
    expect(fourth.templates.every((template) => template !== "")).toBe(true);
    expect(fourth.effects).toEqual(["get_order E-5", "refund E-5 61"]);
    expect(fourth.final).toBe("Done: order E-5 was refunded.");
    expect(model.generations()).toBe(before);
  });

  it("Should never answer one key's request from another key's tree", async () => {
    await runRefundAgent(client("sk-alice", "tenants"), "A-1", world());
    await settle("sk-alice", "tenants");
    const bob = await runRefundAgent(client("sk-bob", "tenants"), "A-1", world());
    expect(bob.outcomes).toEqual(["miss", "miss", "miss"]);
  });

  it("Should make one generation per turn for N concurrent identical agents", async () => {
    const before = model.generations();
    const duplicatesBefore = fastMissDuplicates();
    const runs = await Promise.all(Array.from({ length: 8 }, () => runRefundAgent(client("sk-carol", "herd"), "A-1", world())));
    // A fast miss joins single flight beside its upstream request: in that race window another request may lead
    // too, one duplicate generation each, by design counted and logged (fast_miss_duplicate). Any other extra
    // generation is a single-flight bug. The event is written when the join answers, maybe after the response.
    const duplicates = () => fastMissDuplicates() - duplicatesBefore;
    // The count reads the Worker's event lines: they must reach the output at all.
    expect(dev.output()).toContain('"event":"request"');
    await expect.poll(() => model.generations() - before - duplicates(), { timeout: 10_000 }).toBe(3);
    expect(duplicates()).toBeLessThanOrEqual(2);
    for (const run of runs) expect(run.effects).toEqual(["get_order A-1", "refund A-1 42.5"]);
    const served = runs.flatMap((r) => r.outcomes);
    expect(served.filter((o) => o === "miss")).toHaveLength(3 + duplicates());
    expect(served.filter((o) => o === "hit")).toHaveLength(21 - duplicates());
  });

  it("Should store exactly one node per path hash and never the raw key", async () => {
    const dupes = await dev.sql("SELECT hash, COUNT(*) AS n FROM nodes GROUP BY hash HAVING n > 1");
    expect(dupes).toEqual([]);
    const leaks = await dev.sql(
      "SELECT COUNT(*) AS n FROM nodes, trees WHERE nodes.message LIKE '%sk-alice%' OR trees.frame LIKE '%sk-alice%' OR trees.tenant LIKE '%sk-alice%'",
    );
    expect(leaks[0].n).toBe(0);
    const trees = await dev.sql("SELECT COUNT(*) AS n FROM trees");
    expect(Number(trees[0].n)).toBeGreaterThan(0);
  });
});
