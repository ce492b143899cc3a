import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { DEFAULT_POLICY } from "../../src/cache/policy";
import { HotCache } from "../../src/engine/lookup/isolate-cache";
import { lookupAnswer, type LookupSource } from "../../src/engine/lookup/read-through";
import { REFRESH_AT } from "../../src/engine/lookup/refresh-ahead";
import { recordGeneration } from "../../src/store/tree/record";
import { counted } from "./d1-calls";
import { recording } from "./recordings";

/**
 * Refresh ahead on a clock the test moves: a path hit every STEP_MS through
 * WINDOWS staleness bounds. The lookup reads `Date.now()` (vi.useFakeTimers
 * fakes Date alone: timers, D1 and the refresh's batch window run as usual),
 * and each hit's refresh is awaited before the clock moves on, so the count
 * of store calls does not depend on how busy the machine is. (This replaced
 * an HTTP test that hit a path for 8 real TTL windows and allowed at most 3
 * cold reads: on a loaded machine it saw 4.)
 */
const BOUND_MS = 200;
const WINDOWS = 8;
const STEP_MS = 10;
const START = 1_800_000_000_000;

afterEach(() => {
  vi.useRealTimers();
});

/** A recorded answer and a lookup source over the test database with every D1 call counted; `refresh`: whether hits may refresh (a waitUntil to run on). */
async function steadyPath(refresh: boolean) {
  const input = recording(`steady-${crypto.randomUUID()}`, ["is my order on its way?"], "it ships today");
  await recordGeneration(env.DB, input);
  const d1 = counted(env.DB);
  const deferred: Array<Promise<unknown>> = [];
  const source: LookupSource = {
    shard: { name: "DB", db: d1.db },
    bookmark: null,
    replicas: false,
    colo: null,
    defer: refresh ? (work) => void deferred.push(work) : undefined,
  };
  /** Waits for every refresh started so far (and any they start). */
  const settled = async () => {
    for (let seen = -1; seen !== deferred.length; ) {
      seen = deferred.length;
      await Promise.all(deferred);
    }
  };
  return { key: input.answer.parent, hot: new HotCache(BOUND_MS), d1, source, deferred, settled };
}

/** Hits the path at every step of WINDOWS bounds of simulated time; returns the D1 calls made while answering (on the hit path) and in all. */
async function hitSteadily(path: Awaited<ReturnType<typeof steadyPath>>): Promise<{ onHitPath: number; total: number; hits: number }> {
  vi.useFakeTimers({ toFake: ["Date"], now: START });
  let onHitPath = 0;
  let hits = 0;
  for (let t = 0; t < WINDOWS * BOUND_MS; t += STEP_MS) {
    vi.setSystemTime(START + t);
    const before = path.d1.calls();
    const found = await lookupAnswer(path.source, path.hot, path.key, DEFAULT_POLICY, 5_000);
    expect(found.status, `at ${t} ms`).toBe("hit");
    hits++;
    onHitPath += path.d1.calls() - before;
    await path.settled();
  }
  return { onHitPath, total: path.d1.calls(), hits };
}

describe("refresh ahead on a simulated clock: a path hit steadily never goes cold", () => {
  it("Should answer every hit but the first from memory across several TTL windows, refreshing once per half bound after the response", async () => {
    const { onHitPath, total, hits } = await hitSteadily(await steadyPath(true));
    expect(hits).toBe((WINDOWS * BOUND_MS) / STEP_MS);
    // The first hit reads cold; none after it waits for the store.
    expect(onHitPath).toBe(1);
    // After the response, one read each time the answers fall due: at every half bound but the first read's.
    expect(total - onHitPath).toBe(WINDOWS / REFRESH_AT - 1);
  });

  it("Should read on the hit path once per TTL window without refresh ahead (what the test above rules out)", async () => {
    const { onHitPath, total } = await hitSteadily(await steadyPath(false));
    expect(onHitPath).toBe(WINDOWS);
    expect(total).toBe(WINDOWS);
  });

  it("Should start no refresh for a hit before half the bound, and one at half the bound", async () => {
    const path = await steadyPath(true);
    vi.useFakeTimers({ toFake: ["Date"], now: START });
    expect((await lookupAnswer(path.source, path.hot, path.key, DEFAULT_POLICY, 5_000)).status).toBe("hit");
    expect(path.d1.calls()).toBe(1);
    vi.setSystemTime(START + BOUND_MS * REFRESH_AT - 1);
    expect((await lookupAnswer(path.source, path.hot, path.key, DEFAULT_POLICY, 5_000)).status).toBe("hit");
    expect(path.deferred).toHaveLength(0);
    vi.setSystemTime(START + BOUND_MS * REFRESH_AT);
    expect((await lookupAnswer(path.source, path.hot, path.key, DEFAULT_POLICY, 5_000)).status).toBe("hit");
    expect(path.deferred).toHaveLength(1);
    await path.settled();
    expect(path.d1.calls()).toBe(2);
    expect(path.hot.entry(path.key)?.readAt).toBe(START + BOUND_MS * REFRESH_AT);
  });
});
