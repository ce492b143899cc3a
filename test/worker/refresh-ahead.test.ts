import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { coloCache } from "../../src/engine/lookup/colo-cache";
import { REFRESH_AT, refreshDue } from "../../src/engine/lookup/refresh-ahead";
import { readAnswers } from "../../src/store/tree/answers";
import { newKey } from "./api-helpers";
import { chat, later, recorded, storeCost, uniqueModel } from "./helpers";
import { settled } from "./settled";
import { COLO_TTL_MS, hot, keepDue, recordedPath } from "./refresh-support";

describe("refresh ahead: a due hit is served from memory and renewed after the response", () => {
  it("Should be due at half the bound, and never with a bound of 0", () => {
    expect(refreshDue(1_000, 200, 1_000 + 200 * REFRESH_AT - 1)).toBe(false);
    expect(refreshDue(1_000, 200, 1_000 + 200 * REFRESH_AT)).toBe(true);
    expect(refreshDue(0, 0, 10_000)).toBe(false);
  });

  it("Should serve a due hit from memory with no store call, then read it again after the response and renew both layers", async () => {
    // settled: the colo put of recordedPath's own read has landed before the delete below.
    const { key, body, answers, parent } = await settled(() => recordedPath("refresh-due"));
    const colo = coloCache(COLO_TTL_MS)!;
    // Answers read from the store 90% of the bound ago: due (kept in memory until the hit, however late it comes).
    await colo.delete(parent);
    const readAt = keepDue(parent, answers);
    // settled: the refresh the hit started after its response (its waitUntil) is done.
    const res = await settled(async () => {
      const r = await chat(body, { key });
      await r.arrayBuffer();
      return r;
    });
    expect(res.headers.get("muscle-mem-cache")).toBe("hit");
    expect(storeCost(res)).toEqual({ d1: 0, do: 0 });
    // The refresh read D1 from the Worker and renewed the isolate's memory and the colo's entry.
    expect(hot().entry(parent)?.readAt).toBeGreaterThan(readAt);
    const shared = await colo.get(parent);
    expect(shared?.answers.map((a) => a.hash)).toEqual(answers.map((a) => a.hash));
    expect(shared!.readAt).toBeGreaterThan(readAt);
  });

  it("Should forget at once, in memory and in the colo, answers the refresh finds gone from the store (a prune elsewhere)", async () => {
    const { key, body, answers, parent } = await settled(() => recordedPath("refresh-gone"));
    const colo = coloCache(60_000)!;
    // Another colo pruned the path: its rows are gone, and nothing told this colo.
    await env.DB.prepare("DELETE FROM nodes WHERE parent = ?").bind(parent).run();
    const readAt = keepDue(parent, answers);
    // The colo's entry was read as long ago (a minute's deadline, so that only the refresh can make it go).
    await colo.put(parent, answers, readAt);
    // Still within its bound, the stale answer is served once; the refresh that hit starts finds it gone.
    const res = await settled(async () => {
      const r = await chat(body, { key });
      await r.arrayBuffer();
      return r;
    });
    expect(res.headers.get("muscle-mem-cache")).toBe("hit");
    // settled: the refresh is done, and it forgot the path in both layers.
    expect(hot().entry(parent)).toBeUndefined();
    expect(await colo.get(parent)).toBeUndefined();
    const gone = await chat(body, { key, headers: { "cache-control": "only-if-cached" } });
    expect(gone.status).toBe(504);
    await gone.arrayBuffer();
  });
});

describe("refresh ahead: batched per tree", () => {
  it("Should renew several due paths of one tree, read from D1 together", async () => {
    const key = newKey();
    const model = uniqueModel("refresh-batch");
    const bodies = [0, 1, 2].map((i) => ({ model, messages: [{ role: "user", content: `refresh batch ${i} ${crypto.randomUUID()}` }] }));
    // settled: every recording's forget of its path in this isolate, and every colo put, is done.
    const parents = await settled(async () => {
      const found: string[] = [];
      for (const body of bodies) {
        await (await chat(body, { key })).arrayBuffer();
        await recorded(body, { key });
        const hit = await chat(body, { key });
        const node = hit.headers.get("muscle-mem-node")!;
        await hit.arrayBuffer();
        found.push((await env.DB.prepare("SELECT parent FROM nodes WHERE hash = ?").bind(node).first<{ parent: string }>())!.parent);
      }
      return found;
    });
    expect(parents.every((p) => hot().staleRead(p, 0))).toBe(true);
    // The clock a bound ahead, standing still: past every recording's forget, so each path's answers, as read 90% of
    // the bound ago, are kept, and all three are due.
    await later(COLO_TTL_MS, async () => {
      const colo = coloCache(COLO_TTL_MS)!;
      let readAt = 0;
      for (const parent of parents) {
        await colo.delete(parent);
        readAt = Math.max(readAt, keepDue(parent, await readAnswers(env.DB, parent)));
      }
      // The three due hits arrive together; settled, so their refreshes (after the responses) are done.
      const hits = await settled(() =>
        Promise.all(
          bodies.map(async (body) => {
            const res = await chat(body, { key });
            await res.arrayBuffer();
            return { cache: res.headers.get("muscle-mem-cache"), cost: storeCost(res) };
          }),
        ),
      );
      expect(hits).toEqual(bodies.map(() => ({ cache: "hit", cost: { d1: 0, do: 0 } })));
      // Each path renewed in memory and in the colo, with the answers it holds (which batch read which key is
      // timing: test/unit/refresh-batch.test.ts checks the batching itself).
      for (const parent of parents) {
        expect(hot().entry(parent)?.readAt).toBeGreaterThan(readAt);
        expect((await colo.get(parent))?.readAt).toBeGreaterThan(readAt);
        expect((await colo.get(parent))!.answers).toEqual(await readAnswers(env.DB, parent));
      }
    });
  });
});
