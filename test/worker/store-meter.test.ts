import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { loggedStoreWork, meteredEnv } from "../../src/observability/store-meter";
import { newKey } from "./api-helpers";
import { chat, eventually, later, recorded, storeCost, uniqueModel } from "./helpers";
import { messageRecorded, postMessages } from "./messages.support";

describe("server-timing: what the store did for a request", () => {
  it("Should count the tree object's call and the D1 reads it made for the request on a miss, and none of either on a warm repeat hit", async () => {
    const key = newKey();
    const body = { model: uniqueModel("meter"), messages: [{ role: "user", content: `meter ${crypto.randomUUID()}` }] };
    const miss = await chat(body, { key });
    expect(miss.headers.get("muscle-mem-cache")).toBe("miss");
    const missCost = storeCost(miss);
    await miss.arrayBuffer();
    // The Worker reads the answers on the tree's primary; then the tree's object reads template presence (not the
    // answers again: nothing was recorded there since) and joins single flight in one call (test/worker/miss-round-trip.test.ts).
    expect(missCost).toEqual({ d1: 2, do: 1 });
    await recorded(body, { key });

    // The clock stands still from here (vi.useFakeTimers fakes Date alone): the warm hit comes within the hot
    // cache's 200 ms however slow the machine (1 ms on, so that this read begins after the recording's forget).
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 1 });
    try {
      const first = await chat(body, { key });
      expect(first.headers.get("muscle-mem-cache")).toBe("hit");
      await first.arrayBuffer();
      // The answer set is in this isolate's hot cache now: the next hit reads nothing.
      const warm = await chat(body, { key });
      expect(warm.headers.get("muscle-mem-cache")).toBe("hit");
      expect(storeCost(warm)).toEqual({ d1: 0, do: 0 });
      await warm.arrayBuffer();
    } finally {
      vi.useRealTimers();
    }
  });

  it("Should count the Worker's one D1 read and no Durable Object call on a hit that the hot cache does not hold", async () => {
    const key = newKey();
    const body = { model: uniqueModel("meter-cold"), messages: [{ role: "user", content: `cold ${crypto.randomUUID()}` }] };
    await (await chat(body, { key })).arrayBuffer();
    await recorded(body, { key });
    // HOT_CACHE_TTL_MS is 200 ms in tests: with the clock set past it, the hit reads D1 from the Worker once again (not through the tree's object).
    const { cache, cost } = await later(400, async () => {
      const hit = await chat(body, { key });
      await hit.arrayBuffer();
      return { cache: hit.headers.get("muscle-mem-cache"), cost: storeCost(hit) };
    });
    expect(cache).toBe("hit");
    expect(cost).toEqual({ d1: 1, do: 0 });
  });

  it("Should carry the entries on the Messages API's responses too", async () => {
    const key = `sk-ant-${crypto.randomUUID()}`;
    const body = { model: uniqueModel("meter-msg"), max_tokens: 64, messages: [{ role: "user", content: `hello ${crypto.randomUUID()}` }] };
    const miss = await postMessages(body, { key });
    const cost = storeCost(miss);
    await miss.arrayBuffer();
    expect(cost.d1 + cost.do).toBeGreaterThanOrEqual(1);
    await messageRecorded(body, { key });
    // The recording forgets the key in this isolate after the response; a read that raced that forget is not kept,
    // so the first hits may still go to the tree's object: a warm one comes once the forget is behind them.
    await eventually(async () => {
      const hit = await postMessages(body, { key });
      expect(hit.headers.get("muscle-mem-cache")).toBe("hit");
      const warm = storeCost(hit).do === 0 && storeCost(hit).d1 === 0;
      await hit.arrayBuffer();
      return warm;
    }, 3_000);
  });
});

describe("store_work: the D1 work of a tree object's call after the response (bench/recording-cost.ts)", () => {
  afterEach(() => vi.restoreAllMocks());
  const printed = (): string[] => {
    const lines: string[] = [];
    vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(" ")));
    return lines;
  };

  it("Should log the queries made through metered bindings inside the call at LOG_LEVEL debug, and return the call's value", async () => {
    const lines = printed();
    const db = meteredEnv(env).DB;
    const value = await loggedStoreWork("debug", "writer", "record", async () => {
      await db.prepare("SELECT 1").first();
      await db.batch([db.prepare("SELECT 2"), db.prepare("SELECT 3")]);
      return "done";
    });
    expect(value).toBe("done");
    const events = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((e) => e.event === "store_work");
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ object: "writer", call: "record", d1_queries: 3 });
  });

  it("Should log nothing above LOG_LEVEL debug, and still log what ran when the call throws", async () => {
    const lines = printed();
    const db = meteredEnv(env).DB;
    await loggedStoreWork("info", "learner", "learn", () => db.prepare("SELECT 1").first());
    expect(lines.filter((l) => l.includes("store_work"))).toEqual([]);
    await expect(
      loggedStoreWork("debug", "learner", "learn", async () => {
        await db.prepare("SELECT 1").first();
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    expect(lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((e) => e.event === "store_work")).toEqual([
      expect.objectContaining({ call: "learn", d1_queries: 1 }),
    ]);
  });
});
