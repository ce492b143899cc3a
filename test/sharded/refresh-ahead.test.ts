import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { configOf } from "../../src/config";
import { isolate } from "../../src/isolate";
import { coloCache } from "../../src/store/colo-cache";
import { newKey } from "../worker/api-helpers";
import { chat, eventually, recorded, storeCost, uniqueModel } from "../worker/helpers";
import { dbNamed, NAMES } from "./shard-helpers";

/**
 * Refresh ahead with D1_READ_REPLICATION=on (the sharded project): the
 * refresh reads D1 through a session of the tree's own shard, not the tree's
 * object, and still renews or forgets what this isolate and colo hold.
 */
const COLO_TTL_MS = Number((env as unknown as Record<string, string>).COLO_CACHE_TTL_MS);
const hot = () => isolate(configOf(env)).hot;

async function recordedPath(prefix: string) {
  const key = newKey();
  const body = { model: uniqueModel(prefix), messages: [{ role: "user", content: `${prefix} ${crypto.randomUUID()}` }] };
  await (await chat(body, { key })).arrayBuffer();
  await recorded(body, { key });
  const hit = await chat(body, { key });
  const node = hit.headers.get("muscle-mem-node")!;
  await hit.arrayBuffer();
  // The one shard that holds the node (the tree lives wholly in one).
  for (const name of NAMES) {
    const shard = dbNamed(name);
    const row = await shard.prepare("SELECT parent FROM nodes WHERE hash = ?").bind(node).first<{ parent: string }>();
    if (!row) continue;
    // The miss's recording forgets the key in this isolate after the response: wait for that, then past it.
    await eventually(() => hot().staleRead(row.parent, 0), 5_000);
    await new Promise((r) => setTimeout(r, COLO_TTL_MS));
    await (await chat(body, { key })).arrayBuffer();
    return { key, body, parent: row.parent, shard, answers: hot().get(row.parent)! };
  }
  throw new Error(`no shard holds node ${node}`);
}

describe("refresh ahead over read replicas", () => {
  it("Should renew a due hit by reading the tree's shard after the response, with no store call on the hit", async () => {
    const { key, body, parent, answers } = await recordedPath("replica-refresh");
    expect(answers).toBeDefined();
    const readAt = Date.now() - Math.round(COLO_TTL_MS * 0.9);
    await coloCache(COLO_TTL_MS)!.delete(parent);
    hot().set(parent, answers, Date.now(), Infinity, readAt);
    const res = await chat(body, { key });
    expect(res.headers.get("muscle-mem-cache")).toBe("hit");
    expect(storeCost(res)).toEqual({ d1: 0, do: 0 });
    await res.arrayBuffer();
    await eventually(async () => ((await coloCache(COLO_TTL_MS)!.get(parent))?.readAt ?? 0) > readAt, 2_000);
  });

  it("Should forget a due hit whose answers its shard no longer holds", async () => {
    const { key, body, parent, shard, answers } = await recordedPath("replica-gone");
    await shard.prepare("DELETE FROM nodes WHERE parent = ?").bind(parent).run();
    const readAt = Date.now() - Math.round(COLO_TTL_MS * 0.9);
    hot().set(parent, answers, Date.now(), Infinity, readAt);
    // The colo's entry was read as long ago, with a minute's deadline: only the refresh can make it go.
    const colo = coloCache(60_000)!;
    await colo.put(parent, answers, readAt);
    const res = await chat(body, { key });
    expect(res.headers.get("muscle-mem-cache")).toBe("hit");
    await res.arrayBuffer();
    await eventually(async () => hot().entry(parent) === undefined && (await colo.get(parent)) === undefined, 2_000);
  });
});
