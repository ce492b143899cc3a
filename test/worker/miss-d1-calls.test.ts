import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { DEFAULT_POLICY as policy } from "../../src/cache/policy";
import { readAnswers } from "../../src/store/tree/answers";
import { lookUpOrJoin } from "../../src/store/objects/lookup-or-join";
import { recordGeneration, recordGenerations } from "../../src/store/tree/record";
import { SingleFlight } from "../../src/store/objects/single-flight";
import { partnersOf, readLearning, readPathTo } from "../../src/store/templates/learned";
import { learnFrom } from "../../src/store/templates/learn";
import { recording } from "./recordings";

/**
 * `db` with every call to D1 counted: a statement run (all, first, run, raw)
 * or a batch is one call, however many statements the batch holds. Under
 * `wrangler dev` each call is also inspector traffic that wrangler relays.
 */
function counted(db: D1Database): { db: D1Database; calls: () => number } {
  let calls = 0;
  const real = new WeakMap<object, D1PreparedStatement>();
  const statement = (s: D1PreparedStatement): D1PreparedStatement => {
    const proxy = new Proxy(s, {
      get(target, property) {
        const value: unknown = Reflect.get(target, property, target);
        if (typeof value !== "function") return value;
        if (property === "bind") return (...values: unknown[]) => statement(target.bind(...values));
        if (["all", "first", "run", "raw"].includes(String(property))) calls++;
        return (...args: unknown[]) => Reflect.apply(value, target, args) as unknown;
      },
    });
    real.set(proxy, s);
    return proxy;
  };
  const proxy = new Proxy(db, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (property === "prepare") return (query: string) => statement(target.prepare(query));
      if (property === "batch") {
        return (statements: D1PreparedStatement[]) => {
          calls++;
          return target.batch(statements.map((s) => real.get(s) ?? s));
        };
      }
      return typeof value === "function" ? (...args: unknown[]) => Reflect.apply(value, target, args) as unknown : value;
    },
  });
  return { db: proxy, calls: () => calls };
}


describe("a miss's D1 calls", () => {
  it("Should read the answers and the tree's template presence in one call on a cold lookup", async () => {
    const treeId = `lookup-${crypto.randomUUID()}`;
    const input = recording(treeId, ["hi", "where is my order?"], "let me look");
    const d1 = counted(env.DB);
    const found = await lookUpOrJoin(async () => d1.db, new SingleFlight(1000), { treeId, key: input.answer.parent, policy, timeoutMs: 5000, templates: true, join: true });
    expect(found).toMatchObject({ status: "miss", templates: false, joined: { role: "leader" } });
    expect(d1.calls()).toBe(1);
  });

  it("Should read back the answers a recording leaves at its key in the recording's own batch", async () => {
    const treeId = `read-back-${crypto.randomUUID()}`;
    const first = recording(treeId, ["hi", "refund A-1"], "done");
    const second = recording(treeId, ["hi", "refund A-1"], "done, and more");
    const d1 = counted(env.DB);
    const recorded = await recordGeneration(d1.db, first, Date.now(), first.answer.parent);
    expect(d1.calls()).toBe(2); // which nodes exist, then the batch
    expect(recorded.answers).toEqual(await readAnswers(env.DB, first.answer.parent));
    expect(recorded.answers?.map((a) => a.hash)).toEqual([first.answer.hash]);
    // In a group, each read sees the whole batch: both answers, the first observed once more.
    const group = await recordGenerations(env.DB, [first, second], Date.now(), [first.answer.parent, undefined]);
    expect(group[1].answers).toBeUndefined();
    expect(group[0].answers).toEqual(await readAnswers(env.DB, first.answer.parent));
    expect(group[0].answers?.find((a) => a.hash === first.answer.hash)?.observations).toBe(2);
    expect(group[0].answers).toHaveLength(2);
  });

  it("Should learn from an answer with siblings of its shape in at most two calls", async () => {
    const treeId = `learn-${crypto.randomUUID()}`;
    const inputs = ["A-1", "B-2", "C-3", "D-4", "E-5", "F-6"].map((order) => recording(treeId, ["hi", `refund order ${order}`], `refunding order ${order}`));
    for (const input of inputs.slice(0, -1)) {
      await recordGeneration(env.DB, input);
      await learnFrom(env.DB, input);
    }
    const last = inputs.at(-1)!;
    await recordGeneration(env.DB, last);
    const d1 = counted(env.DB);
    await learnFrom(d1.db, last);
    expect(d1.calls()).toBeLessThanOrEqual(2);
    const observed = await env.DB.prepare("SELECT count(*) AS n FROM template_observations WHERE tree_id = ?1").bind(treeId).first<{ n: number }>();
    expect(observed?.n).toBe(6);
  });

  it("Should read the same partners and paths in learning's one batch as partnersOf and readPathTo one by one", async () => {
    const treeId = `partners-${crypto.randomUUID()}`;
    const inputs = ["A-1", "B-2", "C-3", "D-4", "E-5", "F-6"].map((order) => recording(treeId, ["hi", `where is order ${order}?`], `order ${order} has shipped`));
    for (const input of inputs) await recordGeneration(env.DB, input);
    const shapeKey = `shape-${crypto.randomUUID()}`;
    for (const [i, input] of inputs.entries()) await env.DB.prepare("INSERT INTO template_observations (answer_hash, tree_id, shape_key, created_at) VALUES (?1, ?2, ?3, ?4)").bind(input.answer.hash, treeId, shapeKey, 1000 + i).run();
    // One partner pruned under its observation: its path reads as null both ways.
    await env.DB.prepare("DELETE FROM nodes WHERE hash = ?1").bind(inputs[3].answer.hash).run();
    const last = inputs.at(-1)!.answer.hash;
    const read = await readLearning(env.DB, ["no-such-lookup-key"], 8, { shapeKey, answerHash: last, limit: 4 });
    const hashes = await partnersOf(env.DB, shapeKey, last, 4);
    expect(hashes).toEqual([4, 3, 2, 1].map((i) => inputs[i].answer.hash));
    expect(read.partners).toEqual(await Promise.all(hashes.map(async (hash) => ({ hash, path: await readPathTo(env.DB, hash) }))));
    expect(read.partners.map((p) => p.path === null)).toEqual([false, true, false, false]);
    expect(read.partners[0].path?.path.map((n) => n.hash)).toEqual(inputs[4].path.map((n) => n.hash));
    expect(read.templates).toEqual([]);
  });
});
