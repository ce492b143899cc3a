import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { HotCache } from "../../src/store/hot-cache";
import { api, newKey } from "./api-helpers";
import { chat, eventually, generations, recorded, uniqueModel } from "./helpers";

/** HOT_CACHE_TTL_MS of the test Worker (vitest.config.ts): the bound on serving a stale node. */
const TTL_MS = Number((env as unknown as Record<string, string>).HOT_CACHE_TTL_MS);
const pastTheBound = () => new Promise((r) => setTimeout(r, TTL_MS + 50));

async function onlyIfCached(body: unknown, key: string): Promise<number> {
  const res = await chat(body, { key, headers: { "cache-control": "only-if-cached" } });
  await res.arrayBuffer();
  return res.status;
}

/** Records `body`, then serves it once, so the answer sits in this isolate's hot cache; returns the answer node. */
async function recordAndHit(body: unknown, key: string): Promise<string> {
  await (await chat(body, { key })).arrayBuffer();
  await recorded(body, { key });
  const hit = await chat(body, { key });
  await hit.arrayBuffer();
  expect(hit.headers.get("muscle-mem-cache")).toBe("hit");
  return hit.headers.get("muscle-mem-node")!;
}

describe("hot cache: invalidation bound", () => {
  it("Should run with a short, positive TTL in tests", () => {
    expect(TTL_MS).toBeGreaterThan(0);
    expect(TTL_MS).toBeLessThan(1000);
  });

  it("Should stop serving a pruned answer once HOT_CACHE_TTL_MS has passed, and ask the model again", async () => {
    const key = newKey();
    const model = uniqueModel("hot-prune");
    const body = { model, messages: [{ role: "user", content: `prune me ${crypto.randomUUID()}` }] };
    const node = await recordAndHit(body, key);
    const pruned = await api(`/nodes/${node}`, { token: key, method: "DELETE" });
    expect(pruned.status).toBe(200);
    await pruned.arrayBuffer();
    await pastTheBound();
    expect(await onlyIfCached(body, key)).toBe(504);
    const before = await generations(model);
    const next = await chat(body, { key });
    expect(next.headers.get("muscle-mem-cache")).toBe("miss");
    await next.arrayBuffer();
    await eventually(async () => (await generations(model)) === before + 1);
  });

  it("Should stop serving once a new observation disagrees (unanimous policy), within HOT_CACHE_TTL_MS", async () => {
    const key = newKey();
    const model = uniqueModel("fresh-hot");
    const body = { model, messages: [{ role: "user", content: `say something ${crypto.randomUUID()}` }] };
    const node = await recordAndHit(body, key);
    const [{ parent }] = (await env.DB.prepare("SELECT parent FROM nodes WHERE hash = ?").bind(node).all<{ parent: string }>()).results;
    // The `fresh` upstream answers differently every time: a second, different answer at the same node.
    const again = await chat(body, { key, headers: { "cache-control": "no-cache" } });
    expect(again.headers.get("muscle-mem-cache")).toBe("miss");
    await again.arrayBuffer();
    const answersAt = async () =>
      (await env.DB.prepare("SELECT COUNT(*) AS n FROM nodes WHERE parent = ? AND role = 'assistant' AND observations > 0").bind(parent).first<{ n: number }>())!.n;
    await eventually(async () => (await answersAt()) === 2);
    await pastTheBound();
    expect(await onlyIfCached(body, key)).toBe(504);
  });
});

describe("HotCache", () => {
  const answer = { hash: "a", message: { role: "assistant", content: "x" }, observations: 1, finishReason: "stop", promptTokens: 1, completionTokens: 1, latencyMs: 1 };

  it("Should serve an entry until its TTL and not after", () => {
    const hot = new HotCache(100);
    hot.set("k", [answer], 1_000);
    expect(hot.get("k", 1_099)).toEqual([answer]);
    expect(hot.get("k", 1_100)).toBeUndefined();
  });

  it("Should keep no negative entries and nothing at all with a TTL of 0", () => {
    const hot = new HotCache(100);
    hot.set("empty", [], 0);
    expect(hot.get("empty", 1)).toBeUndefined();
    const off = new HotCache(0);
    off.set("k", [answer], 0);
    expect(off.get("k", 0)).toBeUndefined();
  });
});
