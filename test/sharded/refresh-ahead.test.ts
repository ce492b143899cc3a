import { describe, expect, it } from "vitest";
import { coloCache } from "../../src/engine/lookup/colo-cache";
import { chat, eventually, storeCost } from "../worker/helpers";
import { COLO_TTL_MS, hot, keepDue, recordedPath } from "../worker/refresh-support";
import { dbNamed, NAMES } from "./shard-helpers";

const everyShard = () => NAMES.map(dbNamed);

/**
 * Refresh ahead with D1_READ_REPLICATION=on (the sharded project): the
 * refresh reads D1 through a session of the tree's own shard, not the tree's
 * object, and still renews or forgets what this isolate and colo hold.
 */
describe("refresh ahead over read replicas", () => {
  it("Should renew a due hit by reading the tree's shard after the response, with no store call on the hit", async () => {
    const { key, body, parent, answers } = await recordedPath("replica-refresh", everyShard());
    expect(answers).toBeDefined();
    await coloCache(COLO_TTL_MS)!.delete(parent);
    const readAt = keepDue(parent, answers);
    const res = await chat(body, { key });
    expect(res.headers.get("muscle-mem-cache")).toBe("hit");
    expect(storeCost(res)).toEqual({ d1: 0, do: 0 });
    await res.arrayBuffer();
    await eventually(async () => ((await coloCache(COLO_TTL_MS)!.get(parent))?.readAt ?? 0) > readAt, 2_000);
  });

  it("Should forget a due hit whose answers its shard no longer holds", async () => {
    const { key, body, parent, db: shard, answers } = await recordedPath("replica-gone", everyShard());
    await shard.prepare("DELETE FROM nodes WHERE parent = ?").bind(parent).run();
    const readAt = keepDue(parent, answers);
    // The colo's entry was read as long ago, with a minute's deadline: only the refresh can make it go.
    const colo = coloCache(60_000)!;
    await colo.put(parent, answers, readAt);
    const res = await chat(body, { key });
    expect(res.headers.get("muscle-mem-cache")).toBe("hit");
    await res.arrayBuffer();
    await eventually(async () => hot().entry(parent) === undefined && (await colo.get(parent)) === undefined, 2_000);
  });
});
