import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { recordGeneration } from "../../src/store/tree/record";
import type { LearnedSoFar, TreeLearner } from "../../src/store/objects/tree-learner";
import { learnerNews } from "../../src/engine/templates";
import { counted } from "./d1-calls";
import { recording } from "./recordings";

const count = async (table: string, treeId: string) =>
  (await env.DB.prepare(`SELECT count(*) AS n FROM ${table} WHERE tree_id = ?1`).bind(treeId).first<{ n: number }>())?.n ?? 0;

describe("TreeLearner: learning deferred to the alarm", () => {
  it("Should queue recorded misses with no D1 work and one alarm, then learn the whole batch in the alarm", async () => {
    const treeId = `learner-${crypto.randomUUID()}`;
    const inputs = ["A-1", "B-22", "C-333", "D-4"].map((order) => recording(treeId, [`refund order ${order}`], `refunding order ${order}`));
    for (const input of inputs) await recordGeneration(env.DB, input);
    const stub = env.TREE_LEARNER.get(env.TREE_LEARNER.idFromName(treeId));
    const d1 = counted(env.DB);
    const queued = await runInDurableObject(stub, async (instance: TreeLearner, state) => {
      // The alarm waits long here: this test runs it itself (runDurableObjectAlarm), whatever the machine's speed.
      (instance as unknown as { delayMs: number }).delayMs = 600_000;
      // Every D1 call the learner makes, queuing or learning, goes through this counter (the tree's home database).
      (instance as unknown as { home: { db: () => Promise<D1Database> } }).home.db = async () => d1.db;
      let alarms = 0;
      const realAlarm = state.storage.setAlarm.bind(state.storage);
      state.storage.setAlarm = ((...args: Parameters<typeof realAlarm>) => (alarms++, realAlarm(...args))) as typeof realAlarm;
      const replies: LearnedSoFar[] = [];
      for (const input of inputs) replies.push(await instance.learnSoon(input));
      return { replies, alarms, d1: d1.calls() };
    });
    expect(queued.alarms).toBe(1);
    expect(queued.d1).toBe(0);
    expect(queued.replies.map((r) => r.induced)).toEqual([0, 0, 0, 0]);
    expect(await count("template_observations", treeId)).toBe(0);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    // The alarm's learning went through the same counter: two D1 calls a pass (its reads, its writes), and two
    // passes for the four: B-22 induces a template with A-1, so C-333 (under it) starts a second pass (learn-batch.ts).
    expect(d1.calls()).toBe(2 * 2);
    // Every queued answer was learned, in the order recorded: each observed once, and templates induced.
    expect(await count("template_observations", treeId)).toBe(inputs.length);
    expect(await count("templates", treeId)).toBeGreaterThan(0);
    const after = await runInDurableObject(stub, async (instance: TreeLearner, state) => {
      const reply = await instance.learnSoon(recording(treeId, ["refund order E-5"], "refunding order E-5"));
      await state.storage.deleteAlarm();
      return reply;
    });
    expect(after.epoch).toBe(queued.replies[0].epoch);
    expect(after.induced).toBeGreaterThan(0);
  });

  it("Should tell an isolate of templates its learner induced since it last asked, and of a new object run", () => {
    const treeId = `news-${crypto.randomUUID()}`;
    expect(learnerNews(treeId, { epoch: "a", induced: 0 })).toBe(false);
    expect(learnerNews(treeId, { epoch: "a", induced: 0 })).toBe(false);
    expect(learnerNews(treeId, { epoch: "a", induced: 2 })).toBe(true);
    expect(learnerNews(treeId, { epoch: "a", induced: 2 })).toBe(false);
    expect(learnerNews(treeId, { epoch: "b", induced: 0 })).toBe(true);
    // An isolate that never asked this tree's learner: news only when something was induced.
    expect(learnerNews(`news-${crypto.randomUUID()}`, { epoch: "c", induced: 1 })).toBe(true);
  });
});
