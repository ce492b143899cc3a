import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { configOf } from "../../src/config";
import { HotCache } from "../../src/engine/lookup/isolate-cache";
import { lookupAnswer, type LookupSource } from "../../src/engine/lookup/read-through";
import type { FarLookup } from "../../src/engine/lookup/object-lookup";
import { meteredEnv, newStoreCost, runMetered } from "../../src/observability/store-meter";
import { shards } from "../../src/store/shards/shards";
import { treeWriterOf } from "../../src/store/objects/tree-objects";
import type { RecordInput } from "../../src/store/tree/record";
import { recording } from "./recordings";

/**
 * A cold lookup whose Worker read the tree's primary (no read replication) and found nothing to serve: the
 * tree's object joins single flight without reading the answers again, unless it recorded something at that
 * key since the read (src/store/objects/recent-writes.ts), in which case it reads again and serves it.
 */
const metered = meteredEnv(env);
const policy = configOf(env).policy;
const primary = (): LookupSource => ({ shard: { name: shards(metered)[0].name, db: shards(metered)[0].db }, bookmark: null, replicas: false, colo: null });

/** The tree's writer; with `between`, a recording the object makes after the Worker's read and before the lookup reaches it. */
function writerFor(treeId: string, between?: RecordInput): FarLookup["writer"] {
  const writer = treeWriterOf(metered, treeId);
  if (!between) return writer;
  // The real object's stub, whose lookupOrJoin first records `between` (no claim token: single flight keeps no recent answer for it).
  const racing = {
    lookupOrJoin: async (request: Parameters<typeof writer.lookupOrJoin>[0]) => {
      await writer.record(between);
      return writer.lookupOrJoin(request);
    },
    release: (key: string, token: string) => writer.release(key, token),
  };
  // SAFETY: lookUpFar calls only lookupOrJoin and release, both delegated to the real stub.
  return racing as unknown as FarLookup["writer"];
}

async function coldLookup(treeId: string, asked: RecordInput, between?: RecordInput) {
  const writer = writerFor(treeId, between);
  const far: FarLookup = { writer, treeId, templates: false, join: true, path: asked.path.map((p) => p.hash) };
  const cost = newStoreCost();
  const found = await runMetered(cost, () => lookupAnswer(primary(), new HotCache(0), asked.answer.parent, policy, 5_000, far));
  if (found.status === "miss" && found.joined?.role === "leader") await treeWriterOf(env, treeId).release(asked.answer.parent, found.joined.token);
  return { found, d1: cost.d1.queries };
}

describe("a cold miss read on the tree's primary", () => {
  it("Should join single flight without a second read of the answers, and keep the Worker's own probe of the path", async () => {
    const treeId = `primary-read-${crypto.randomUUID()}`;
    await treeWriterOf(env, treeId).record(recording(treeId, ["hi", "where is my order?"], "let me look"));
    const asked = recording(treeId, ["hi", "where is my refund?"], "unknown yet");
    const { found, d1 } = await coldLookup(treeId, asked);
    expect(found).toMatchObject({ status: "miss", joined: { role: "leader" }, recorded: 0, probe: { depth: 1, tree: true } });
    // The Worker's one probed read; the object read nothing (a non-template route: no template presence either).
    expect(d1).toBe(1);
  });

  it("Should read again and serve the answer when a recording of the key landed between the Worker's read and the object's join", async () => {
    const treeId = `primary-race-${crypto.randomUUID()}`;
    const asked = recording(treeId, ["hi", "cancel order 7"], "cancelled");
    const { found, d1 } = await coldLookup(treeId, asked, asked);
    expect(found.status).toBe("hit");
    if (found.status === "hit") expect(found.answer.hash).toBe(asked.answer.hash);
    expect(d1).toBe(2);
  });

  it("Should still trust the Worker's read when what landed in between was recorded at another key of the tree", async () => {
    const treeId = `primary-other-${crypto.randomUUID()}`;
    const asked = recording(treeId, ["hi", "track parcel 9"], "unknown yet");
    const other = recording(treeId, ["hi", "track parcel 10"], "in transit");
    const { found, d1 } = await coldLookup(treeId, asked, other);
    expect(found).toMatchObject({ status: "miss", joined: { role: "leader" } });
    expect(d1).toBe(1);
  });
});
