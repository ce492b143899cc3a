import { describe, expect, it } from "vitest";
import type { StoredAnswer } from "../../src/core/answer";
import { HotCache } from "../../src/engine/lookup/isolate-cache";
import { MAX_BATCH_KEYS, refreshAhead, type RefreshTarget } from "../../src/engine/lookup/refresh-ahead";
import { storedAnswer } from "../support/stored-answer";

const answer = storedAnswer;

/** A refresh target over a real HotCache whose store read is `answersOf` (a key it returns nothing for is gone from the store). */
function harness(answersOf: (key: string) => StoredAnswer[] | "fail" = (key) => [answer(`new-${key}`)]) {
  const hot = new HotCache(10_000);
  const reads: Array<{ batch: string; keys: string[] }> = [];
  const deferred: Array<Promise<unknown>> = [];
  const target = (batch: string): RefreshTarget => ({
    hot,
    colo: null,
    boundMs: 200,
    batch,
    read: async (keys) => {
      reads.push({ batch, keys: [...keys] });
      if (keys.some((key) => answersOf(key) === "fail")) throw new Error("store down");
      return new Map(keys.flatMap((key) => (answersOf(key) === "fail" ? [] : [[key, answersOf(key) as StoredAnswer[]]])));
    },
    defer: (work) => void deferred.push(work),
  });
  const stale = Date.now() - 150;
  const keep = (...keys: string[]) => keys.forEach((key) => hot.set(key, [answer(`old-${key}`)], Date.now(), Infinity, stale));
  const settled = async () => {
    for (let seen = -1; seen !== deferred.length; ) {
      seen = deferred.length;
      await Promise.all(deferred);
    }
  };
  return { hot, reads, deferred, target, keep, stale, settled };
}

const unique = (name: string) => `${name}-${crypto.randomUUID()}`;

describe("refresh ahead, batched per tree", () => {
  it("Should read the due keys of one tree in one call, and each tree's in a call of its own", async () => {
    const h = harness();
    const [a, b] = [unique("tree-a"), unique("tree-b")];
    const [k1, k2, k3] = [unique("k1"), unique("k2"), unique("k3")];
    h.keep(k1, k2, k3);
    refreshAhead(h.target(a), k1);
    refreshAhead(h.target(a), k2);
    refreshAhead(h.target(b), k3);
    // One wait per batch, held by the request that started it.
    expect(h.deferred).toHaveLength(2);
    await h.settled();
    expect(h.reads).toEqual([
      { batch: a, keys: [k1, k2] },
      { batch: b, keys: [k3] },
    ]);
    for (const key of [k1, k2, k3]) {
      expect(h.hot.get(key)?.map((x) => x.hash)).toEqual([`new-${key}`]);
      expect(h.hot.entry(key)!.readAt).toBeGreaterThan(h.stale);
    }
    // Keys read together share their read time: they fall due together again.
    expect(h.hot.entry(k1)!.readAt).toBe(h.hot.entry(k2)!.readAt);
  });

  it("Should read a key once while its refresh runs, however many hits ask", async () => {
    const h = harness();
    const [batch, key] = [unique("tree"), unique("k")];
    h.keep(key);
    for (let i = 0; i < 5; i++) refreshAhead(h.target(batch), key);
    await h.settled();
    expect(h.reads).toEqual([{ batch, keys: [key] }]);
    // Once it has run, a later due hit may refresh the key again.
    refreshAhead(h.target(batch), key);
    await h.settled();
    expect(h.reads).toHaveLength(2);
  });

  it("Should forget at once the keys a batch finds gone, and renew the others", async () => {
    const [gone, kept] = [unique("gone"), unique("kept")];
    const h = harness((key) => (key === gone ? [] : [answer(`new-${key}`)]));
    const batch = unique("tree");
    h.keep(gone, kept);
    refreshAhead(h.target(batch), gone);
    refreshAhead(h.target(batch), kept);
    await h.settled();
    expect(h.hot.entry(gone)).toBeUndefined();
    expect(h.hot.get(kept)?.map((x) => x.hash)).toEqual([`new-${kept}`]);
  });

  it("Should keep nothing a write of this isolate made stale while the batch read", async () => {
    const h = harness();
    const batch = unique("tree");
    const [written, other] = [unique("written"), unique("other")];
    h.keep(written, other);
    refreshAhead(h.target(batch), written);
    refreshAhead(h.target(batch), other);
    // A record forgets `written` before the batch's read starts: its read is stale and must not be kept.
    h.hot.delete(written, Date.now() + 10_000);
    await h.settled();
    expect(h.hot.entry(written)).toBeUndefined();
    expect(h.hot.get(other)?.map((x) => x.hash)).toEqual([`new-${other}`]);
  });

  it("Should stop gathering a full batch: the next key starts another", async () => {
    const h = harness();
    const batch = unique("tree");
    const keys = Array.from({ length: MAX_BATCH_KEYS + 2 }, (_, i) => unique(`k${i}`));
    h.keep(...keys);
    for (const key of keys) refreshAhead(h.target(batch), key);
    await h.settled();
    expect(h.reads.map((r) => r.keys.length)).toEqual([MAX_BATCH_KEYS, 2]);
    expect(h.reads.flatMap((r) => r.keys)).toEqual(keys);
  });

  it("Should leave what it holds alone when the store fails, and let the keys refresh again", async () => {
    let failing = true;
    const h = harness((key) => (failing ? "fail" : [answer(`new-${key}`)]));
    const [batch, key] = [unique("tree"), unique("k")];
    h.keep(key);
    refreshAhead(h.target(batch), key);
    await h.settled();
    expect(h.hot.get(key)?.map((x) => x.hash)).toEqual([`old-${key}`]);
    failing = false;
    refreshAhead(h.target(batch), key);
    await h.settled();
    expect(h.hot.get(key)?.map((x) => x.hash)).toEqual([`new-${key}`]);
  });
});
