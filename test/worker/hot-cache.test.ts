import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { HotCache } from "../../src/engine/lookup/isolate-cache";
import { api, newKey } from "./api-helpers";
import { callWorker, chatRequest, type Vars } from "./faults.support";
import { chat, eventually, generations, later, recorded, uniqueModel } from "./helpers";

/** HOT_CACHE_TTL_MS of the test Worker (vitest.config.ts): the bound on serving a stale node. */
const TTL_MS = Number((env as unknown as Record<string, string>).HOT_CACHE_TTL_MS);

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

  it("Should serve an answer changed in D1 behind its back from memory until HOT_CACHE_TTL_MS, and not after", async () => {
    // The colo layer off, so that memory alone can serve; a clock the test sets (vi.useFakeTimers fakes Date alone:
    // timers, D1 and the upstream run as usual), so that no probe depends on how fast the machine answers.
    const ttl = 1500;
    const vars: Vars = { HOT_CACHE_TTL_MS: String(ttl), COLO_CACHE_TTL_MS: "0" };
    const key = newKey();
    const body = { model: uniqueModel("echo-hot-ttl"), messages: [{ role: "user", content: `stale for a while ${crypto.randomUUID()}` }] };
    const call = async (control?: string) => {
      const { res, settled } = await callWorker(chatRequest(body, { key, headers: control ? { "cache-control": control } : {} }), vars);
      await res.arrayBuffer();
      await settled();
      return res;
    };
    expect((await call()).headers.get("muscle-mem-cache")).toBe("miss");
    const node = (await call("only-if-cached")).headers.get("muscle-mem-node")!;
    expect(node).toBeTruthy();
    // Past the bound of everything read so far (and of the recording's forget): the next read fills memory afresh.
    const readAt = Date.now() + ttl + 50;
    vi.useFakeTimers({ toFake: ["Date"], now: readAt });
    try {
      expect((await call("only-if-cached")).status).toBe(200);
      // Another isolate's prune as this isolate sees it: D1 changes and nothing tells this isolate (no API call, no record).
      await env.DB.prepare("UPDATE nodes SET observations = 0 WHERE hash = ?1").bind(node).run();
      // Well inside the TTL (and before a refresh would be due): memory still serves the answer D1 no longer has.
      vi.setSystemTime(readAt + ttl * 0.4);
      expect((await call("only-if-cached")).status).toBe(200);
      // Nothing but the TTL can end the stale answer now.
      vi.setSystemTime(readAt + ttl);
      expect((await call("only-if-cached")).status).toBe(504);
    } finally {
      vi.useRealTimers();
    }
  });

  it("Should stop serving a pruned answer within the staleness bound, and ask the model again", async () => {
    const key = newKey();
    const model = uniqueModel("hot-prune");
    const body = { model, messages: [{ role: "user", content: `prune me ${crypto.randomUUID()}` }] };
    const node = await recordAndHit(body, key);
    const pruned = await api(`/nodes/${node}`, { token: key, method: "DELETE" });
    expect(pruned.status).toBe(200);
    await pruned.arrayBuffer();
    const before = await generations(model);
    // The clock set past the bound: nothing this isolate or the colo read before the prune may serve it.
    await later(TTL_MS + 50, async () => {
      expect(await onlyIfCached(body, key)).toBe(504);
      const next = await chat(body, { key });
      expect(next.headers.get("muscle-mem-cache")).toBe("miss");
      await next.arrayBuffer();
    });
    // The scripted model counts a generation before it answers.
    expect(await generations(model)).toBe(before + 1);
  });

  it("Should stop serving once a new observation disagrees (unanimous policy): the record drops this isolate's entry", async () => {
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
      (await env.DB.prepare("SELECT COUNT(*) AS n FROM nodes WHERE parent = ? AND role = 'assistant' AND observations > 0")
        .bind(parent)
        .first<{ n: number }>())!.n;
    await eventually(async () => (await answersAt()) === 2);
    await eventually(async () => (await onlyIfCached(body, key)) === 504);
  });
});

describe("HotCache", () => {
  const answer = {
    hash: "a",
    message: { role: "assistant", content: "x" },
    observations: 1,
    finishReason: "stop",
    promptTokens: 1,
    completionTokens: 1,
    latencyMs: 1,
  };

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

  it("Should never keep answers whose read began before this isolate forgot their key (a read racing a record)", () => {
    const hot = new HotCache(1_000);
    // A read began at 1000; a record forgot the key at 1005; the read returns at 1010 with what it saw before.
    hot.delete("k", 1_005);
    expect(hot.staleRead("k", 1_000, 1_010)).toBe(true);
    hot.set("k", [answer], 1_010, Infinity, 1_000);
    expect(hot.get("k", 1_010)).toBeUndefined();
    // A read that began at the same moment as the forget is refused too (when in doubt, miss); a later one is kept.
    hot.set("k", [answer], 1_010, Infinity, 1_005);
    expect(hot.get("k", 1_010)).toBeUndefined();
    hot.set("k", [answer], 1_010, Infinity, 1_006);
    expect(hot.get("k", 1_010)).toEqual([answer]);
    // Other keys are not affected by that forget.
    hot.set("other", [answer], 1_010, Infinity, 1_000);
    expect(hot.get("other", 1_010)).toEqual([answer]);
  });

  it("Should never keep answers whose read began before this isolate forgot everything (a prune or import)", () => {
    const hot = new HotCache(1_000);
    hot.clear(2_000);
    hot.set("k", [answer], 2_010, Infinity, 1_999);
    expect(hot.get("k", 2_010)).toBeUndefined();
    hot.set("k", [answer], 2_010, Infinity, 2_001);
    expect(hot.get("k", 2_010)).toEqual([answer]);
  });

  it("Should keep the answer sets within a size budget, the oldest going first, and count a replaced or deleted entry once", () => {
    const big = (n: number) => ({ ...answer, hash: `h${n}`, message: { role: "assistant" as const, content: "y".repeat(1_000) } });
    const hot = new HotCache(60_000, 100, 3_000);
    for (let i = 0; i < 5; i++) hot.set(`k${i}`, [big(i)], 1_000 + i);
    // Each set is about 1,000 bytes of JSON plus its fields: only the newest two fit in 3,000.
    expect(["k0", "k1", "k2", "k3", "k4"].filter((k) => hot.get(k, 1_010))).toEqual(["k3", "k4"]);
    const held = hot.bytes;
    hot.set("k4", [big(4)], 1_020);
    expect(hot.bytes).toBe(held);
    hot.delete("k4", 1_030);
    hot.delete("k4", 1_031);
    expect(hot.bytes).toBe(held / 2);
    hot.clear(1_040);
    expect(hot.bytes).toBe(0);
  });
});
