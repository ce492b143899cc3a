import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { coloCache } from "../../src/engine/lookup/colo-cache";
import { REFRESH_AT, refreshDue } from "../../src/engine/lookup/refresh-ahead";
import { readAnswers } from "../../src/store/tree/answers";
import { newKey } from "./api-helpers";
import { chat, eventually, recorded, storeCost, uniqueModel } from "./helpers";
import { COLO_TTL_MS, hot, keepDue, recordedPath } from "./refresh-support";

describe("refresh ahead: a due hit is served from memory and renewed after the response", () => {
  it("Should be due at half the bound, and never with a bound of 0", () => {
    expect(refreshDue(1_000, 200, 1_000 + 200 * REFRESH_AT - 1)).toBe(false);
    expect(refreshDue(1_000, 200, 1_000 + 200 * REFRESH_AT)).toBe(true);
    expect(refreshDue(0, 0, 10_000)).toBe(false);
  });

  it("Should serve a due hit from memory with no store call, then read it again after the response and renew both layers", async () => {
    const { key, body, answers, parent } = await recordedPath("refresh-due");
    const colo = coloCache(COLO_TTL_MS)!;
    // Answers read from the store 90% of the bound ago: due (kept in memory until the hit, however late it comes).
    await colo.delete(parent);
    const readAt = keepDue(parent, answers);
    const res = await chat(body, { key });
    expect(res.headers.get("muscle-mem-cache")).toBe("hit");
    expect(storeCost(res)).toEqual({ d1: 0, do: 0 });
    await res.arrayBuffer();
    // After the response, the refresh reads D1 from the Worker and renews the isolate's memory and the colo's entry
    // (both waited for: the colo put of recordedPath's own read may land after the delete above).
    await eventually(async () => (hot().entry(parent)?.readAt ?? 0) > readAt && ((await colo.get(parent))?.readAt ?? 0) > readAt, 2_000);
    const shared = await colo.get(parent);
    expect(shared?.answers.map((a) => a.hash)).toEqual(answers.map((a) => a.hash));
    expect(shared!.readAt).toBeGreaterThan(readAt);
  });

  it("Should forget at once, in memory and in the colo, answers the refresh finds gone from the store (a prune elsewhere)", async () => {
    const { key, body, answers, parent } = await recordedPath("refresh-gone");
    const colo = coloCache(60_000)!;
    // Another colo pruned the path: its rows are gone, and nothing told this colo.
    await env.DB.prepare("DELETE FROM nodes WHERE parent = ?").bind(parent).run();
    const readAt = keepDue(parent, answers);
    // The colo's entry was read as long ago (a minute's deadline, so that only the refresh can make it go).
    await colo.put(parent, answers, readAt);
    // Still within its bound, the stale answer is served once; the refresh that hit starts finds it gone.
    const res = await chat(body, { key });
    expect(res.headers.get("muscle-mem-cache")).toBe("hit");
    await res.arrayBuffer();
    await eventually(async () => hot().entry(parent) === undefined && (await colo.get(parent)) === undefined, 2_000);
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
    const parents: string[] = [];
    for (const body of bodies) {
      await (await chat(body, { key })).arrayBuffer();
      await recorded(body, { key });
      const hit = await chat(body, { key });
      const node = hit.headers.get("muscle-mem-node")!;
      await hit.arrayBuffer();
      parents.push((await env.DB.prepare("SELECT parent FROM nodes WHERE hash = ?").bind(node).first<{ parent: string }>())!.parent);
    }
    // Past every recording's forget, then each path's answers as read 90% of the bound ago: all three due.
    await eventually(() => parents.every((p) => hot().staleRead(p, 0)), 5_000);
    await new Promise((r) => setTimeout(r, COLO_TTL_MS));
    const colo = coloCache(COLO_TTL_MS)!;
    let readAt = 0;
    for (const parent of parents) {
      await colo.delete(parent);
      readAt = Math.max(readAt, keepDue(parent, await readAnswers(env.DB, parent)));
    }
    // The three due hits arrive together, within one batch window.
    await Promise.all(
      bodies.map(async (body) => {
        const res = await chat(body, { key });
        expect(res.headers.get("muscle-mem-cache")).toBe("hit");
        expect(storeCost(res)).toEqual({ d1: 0, do: 0 });
        await res.arrayBuffer();
      }),
    );
    // Each path renewed in memory and in the colo, with the answers it holds (which batch read which key is
    // timing: test/unit/refresh-batch.test.ts checks the batching itself).
    await eventually(async () => {
      for (const parent of parents) if ((hot().entry(parent)?.readAt ?? 0) <= readAt || ((await colo.get(parent))?.readAt ?? 0) <= readAt) return false;
      return true;
    }, 2_000);
    for (const parent of parents) expect((await colo.get(parent))!.answers).toEqual(await readAnswers(env.DB, parent));
  });
});
