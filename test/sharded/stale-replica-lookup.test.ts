import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { configOf } from "../../src/config";
import { HotCache } from "../../src/engine/lookup/isolate-cache";
import { lookupAnswer, type LookupSource } from "../../src/engine/lookup/read-through";
import { meteredEnv, newStoreCost, runMetered } from "../../src/observability/store-meter";
import { treeWriterOf } from "../../src/store/objects/tree-objects";
import { recordGeneration } from "../../src/store/tree/record";
import { recording } from "../worker/recordings";
import { recordedPath } from "../worker/refresh-support";
import { dbNamed, homeOf, NAMES } from "./shard-helpers";

const everyShard = () => NAMES.map(dbNamed);

/** A recorded path, its tree, and a shard that does not hold it: it stands in for a replica that has not seen the recording yet. */
async function recordedWithStaleReplica(prefix: string) {
  const path = await recordedPath(prefix, everyShard());
  const row = await path.db.prepare("SELECT tree_id AS treeId FROM nodes WHERE parent = ?1 LIMIT 1").bind(path.parent).first<{ treeId: string }>();
  const treeId = row!.treeId;
  const home = await homeOf(treeId);
  const stale = NAMES.find((name) => name !== home)!;
  expect(await dbNamed(stale).prepare("SELECT count(*) AS n FROM nodes WHERE parent = ?1").bind(path.parent).first<{ n: number }>()).toEqual({ n: 0 });
  return { ...path, treeId, stale };
}

/**
 * A cold lookup reads D1 from the Worker (a replica session with D1_READ_REPLICATION=on) and goes to the
 * tree's object only when that read finds nothing to serve. A replica that is behind can only turn a hit
 * into that second step: the object reads the primary and serves what the replica lacked.
 */
describe("a cold lookup from the Worker, over a replica that is behind", () => {
  it("Should serve the answer the object reads on the primary when the Worker's replica read finds nothing", async () => {
    const { treeId, parent, answers, stale } = await recordedWithStaleReplica("stale-replica");
    const source: LookupSource = { shard: { name: stale, db: dbNamed(stale) }, bookmark: null, replicas: true, colo: null };
    const far = { writer: treeWriterOf(env, treeId), treeId, templates: false, join: true };
    const found = await lookupAnswer(source, new HotCache(0), parent, configOf(env).policy, 5_000, far);
    expect(found.status).toBe("hit");
    if (found.status === "hit") expect(found.answer.hash).toBe(answers[0].hash);
  });

  it("Should miss, never serve, when neither the replica nor the primary holds answers at the key; and take the flight for the miss", async () => {
    const { treeId, stale } = await recordedWithStaleReplica("stale-replica-miss");
    const absent = crypto.randomUUID().replaceAll("-", "");
    const source: LookupSource = { shard: { name: stale, db: dbNamed(stale) }, bookmark: null, replicas: true, colo: null };
    const writer = treeWriterOf(env, treeId);
    const found = await lookupAnswer(source, new HotCache(0), absent, configOf(env).policy, 5_000, { writer, treeId, templates: false, join: true });
    expect(found.status).toBe("miss");
    if (found.status !== "miss") return;
    expect(found.joined?.role).toBe("leader");
    if (found.joined?.role === "leader") await writer.release(absent, found.joined.token);
  });

  it("Should serve a hit read on the tree's own shard with no call to the tree's object, and miss through one call", async () => {
    const { treeId, parent, answers, db } = await recordedWithStaleReplica("replica-hit");
    const home = (await homeOf(treeId))!;
    const metered = meteredEnv(env);
    const source: LookupSource = { shard: { name: home, db }, bookmark: null, replicas: true, colo: null };
    const writer = treeWriterOf(metered, treeId);
    const far = { writer, treeId, templates: false, join: false };
    const cost = newStoreCost();
    const found = await runMetered(cost, () => lookupAnswer(source, new HotCache(0), parent, configOf(env).policy, 5_000, far));
    expect(found.status).toBe("hit");
    if (found.status === "hit") expect(found.answer.hash).toBe(answers[0].hash);
    expect(cost.do.calls).toBe(0);
    // The same lookup at a key with no answers goes on to the object, once (join: false, so no flight is left behind).
    const absent = crypto.randomUUID().replaceAll("-", "");
    const missed = await runMetered(cost, () => lookupAnswer(source, new HotCache(0), absent, configOf(env).policy, 5_000, far));
    expect(missed.status).toBe("miss");
    expect(cost.do.calls).toBe(1);
  });

  it("Should read again in the object, and serve, when the Worker read another shard's primary than the tree's (a directory entry behind a move)", async () => {
    // Written to DB_1 straight, not through the tree's object: the object has written nothing, so only the shard tells it to read again.
    const treeId = `other-primary-${crypto.randomUUID()}`;
    const input = recording(treeId, ["hi", "where is parcel 3?"], "on its way");
    await recordGeneration(dbNamed("DB_1"), input);
    const metered = meteredEnv(env);
    const source: LookupSource = { shard: { name: "DB_2", db: dbNamed("DB_2") }, bookmark: null, replicas: false, colo: null };
    const far = { writer: treeWriterOf(metered, treeId), treeId, templates: false, join: false, path: input.path.map((p) => p.hash) };
    const found = await lookupAnswer(source, new HotCache(0), input.answer.parent, configOf(env).policy, 5_000, far);
    expect(found.status).toBe("hit");
    if (found.status === "hit") expect(found.answer.hash).toBe(input.answer.hash);
    expect(await homeOf(treeId)).toBe("DB_1");
  });
});
