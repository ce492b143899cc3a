import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { DEFAULT_POLICY as policy } from "../../src/cache/policy";
import { readAnswers } from "../../src/store/tree/answers";
import { lookUpOrJoin } from "../../src/store/objects/lookup-or-join";
import { recordGeneration, recordGenerations } from "../../src/store/tree/record";
import { SingleFlight } from "../../src/store/objects/single-flight";
import { partnersOf, readLearning, readPathTo } from "../../src/store/templates/learned";
import { learnFrom } from "../../src/store/templates/learn";
import { counted } from "./d1-calls";
import { recording } from "./recordings";

describe("a miss's D1 calls", () => {
  it("Should read the answers and the tree's template presence in one call on a cold lookup", async () => {
    const treeId = `lookup-${crypto.randomUUID()}`;
    const input = recording(treeId, ["hi", "where is my order?"], "let me look");
    const d1 = counted(env.DB);
    const found = await lookUpOrJoin(async () => d1.db, new SingleFlight(1000), {
      treeId,
      key: input.answer.parent,
      policy,
      timeoutMs: 5000,
      templates: true,
      join: true,
    });
    expect(found).toMatchObject({ status: "miss", templates: false, joined: { role: "leader" } });
    expect(d1.calls()).toBe(1);
  });

  it("Should read template presence alone, and join, when the Worker read the tree's primary and nothing was written at the key since", async () => {
    const treeId = `trusted-${crypto.randomUUID()}`;
    const input = recording(treeId, ["hi", "where is my parcel?"], "on its way");
    await recordGeneration(env.DB, input);
    const request = { treeId, key: input.answer.parent, policy, timeoutMs: 5000, join: true, seen: { shard: "DB", agoMs: 3 } };
    // The Worker's read (a stand-in here: it found nothing) is trusted: the recorded answer is not read again, so this is a miss.
    const quietSince: number[] = [];
    const check = {
      home: async () => "DB",
      quiet: (_key: string, withinMs: number) => {
        quietSince.push(withinMs);
        return true;
      },
    };
    const d1 = counted(env.DB);
    const found = await lookUpOrJoin(async () => d1.db, new SingleFlight(1000), { ...request, templates: true }, Date.now, check);
    expect(found).toMatchObject({ status: "miss", templates: false, joined: { role: "leader" }, reread: false });
    expect(d1.calls()).toBe(1);
    // The window asked about covers the Worker's read and the call's bound: 3 ms ago plus LOOKUP_TIMEOUT_MS at least.
    expect(quietSince[0]).toBeGreaterThanOrEqual(5003);
    const none = counted(env.DB);
    await lookUpOrJoin(async () => none.db, new SingleFlight(1000), { ...request, templates: false }, Date.now, check);
    expect(none.calls()).toBe(0);
  });

  it("Should read the answers again when the object wrote at the key since the Worker's read, or the Worker read another shard", async () => {
    const treeId = `untrusted-${crypto.randomUUID()}`;
    const input = recording(treeId, ["hi", "where is my invoice?"], "sent");
    await recordGeneration(env.DB, input);
    const request = { treeId, key: input.answer.parent, policy, timeoutMs: 5000, templates: true, join: true, seen: { shard: "DB", agoMs: 3 } };
    const written = counted(env.DB);
    const fresh = await lookUpOrJoin(async () => written.db, new SingleFlight(1000), request, Date.now, { home: async () => "DB", quiet: () => false });
    expect(fresh).toMatchObject({ status: "hit", answers: [{ hash: input.answer.hash }] });
    // Template presence read before the write was known to matter, then the answers with it again.
    expect(written.calls()).toBe(2);
    const elsewhere = counted(env.DB);
    const moved = await lookUpOrJoin(async () => elsewhere.db, new SingleFlight(1000), request, Date.now, { home: async () => "DB_1", quiet: () => true });
    expect(moved).toMatchObject({ status: "hit", answers: [{ hash: input.answer.hash }] });
    expect(elsewhere.calls()).toBe(1);
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
    const inputs = ["A-1", "B-2", "C-3", "D-4", "E-5", "F-6"].map((order) =>
      recording(treeId, ["hi", `where is order ${order}?`], `order ${order} has shipped`),
    );
    for (const input of inputs) await recordGeneration(env.DB, input);
    const shapeKey = `shape-${crypto.randomUUID()}`;
    for (const [i, input] of inputs.entries())
      await env.DB.prepare("INSERT INTO template_observations (answer_hash, tree_id, shape_key, created_at) VALUES (?1, ?2, ?3, ?4)")
        .bind(input.answer.hash, treeId, shapeKey, 1000 + i)
        .run();
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
