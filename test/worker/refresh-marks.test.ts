import { describe, expect, it } from "vitest";
import { coloCache } from "../../src/engine/lookup/colo-cache";
import { HotCache } from "../../src/engine/lookup/isolate-cache";
import { refresh, type RefreshTarget } from "../../src/engine/lookup/refresh-ahead";
import { refreshMarks } from "../../src/engine/lookup/refresh-marks";
import { storedAnswer } from "../support/stored-answer";

const answer = storedAnswer;
const unique = (name: string) => `${name}-${crypto.randomUUID()}`;

describe("refresh marks: one refresh per key per colo per interval", () => {
  it("Should let one claim of a key through per interval, on the clock handed in", async () => {
    const marks = refreshMarks(60_000)!;
    const [k1, k2] = [unique("mark-a"), unique("mark-b")];
    const t0 = 1_000_000;
    expect(await marks.claim([k1], t0)).toEqual([k1]);
    // Marked: another isolate (a second claim) skips it until the interval is over; an unmarked key goes through.
    expect(await marks.claim([k1, k2], t0 + 59_999)).toEqual([k2]);
    expect(await marks.claim([k1], t0 + 60_000)).toEqual([k1]);
    expect(await marks.claim([k1], t0 + 60_001)).toEqual([]);
  });

  it("Should let every key through when the Cache API fails (a refresh is always safe)", async () => {
    const failing = {
      match: async () => {
        throw new Error("cache down");
      },
      put: async () => {
        throw new Error("cache down");
      },
    };
    // SAFETY: claim uses match and put alone; the rest of Cache is never called.
    const marks = refreshMarks(60_000, failing as unknown as Cache)!;
    const keys = [unique("down-a"), unique("down-b")];
    expect(await marks.claim(keys, 1_000)).toEqual(keys);
    expect(await marks.claim(keys, 1_001)).toEqual(keys);
  });

  it("Should be off with an interval of 0", () => {
    expect(refreshMarks(0)).toBeNull();
  });

  it("Should read a due key once for two isolates of one colo refreshing it together, and let the second take the first's answers after", async () => {
    const key = unique("two-isolates");
    const colo = coloCache(60_000)!;
    const marks = refreshMarks(30_000);
    const due = Date.now() - 40_000;
    const reads: string[][] = [];
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => (release = r));
    let readStarted: () => void = () => undefined;
    const reading = new Promise<void>((r) => (readStarted = r));
    const isolate = (): RefreshTarget & { hot: HotCache } => {
      const hot = new HotCache(60_000);
      hot.set(key, [answer("old")], Date.now(), Infinity, due);
      return {
        hot,
        colo,
        boundMs: 60_000,
        batch: "tree",
        marks,
        defer: () => undefined,
        read: async (keys) => {
          reads.push([...keys]);
          readStarted();
          await held;
          return new Map(keys.map((k) => [k, [answer("new")]]));
        },
      };
    };
    const [a, b] = [isolate(), isolate()];
    // The colo's entry is as due as both isolates' (read 40 s ago of a minute's bound).
    await colo.put(key, [answer("old")], due);
    const first = refresh(a, [key]);
    // Wait for a's claim (its read has started and is held), then b refreshes the same key.
    await reading;
    expect(reads).toHaveLength(1);
    await refresh(b, [key]);
    expect(reads).toHaveLength(1);
    release();
    await first;
    expect(a.hot.entry(key)?.answers[0].hash).toBe("new");
    // b's next due hit takes a's answers from the colo layer, still without a read of its own.
    await refresh(b, [key]);
    expect(reads).toHaveLength(1);
    expect(b.hot.entry(key)?.answers[0].hash).toBe("new");
  });
});
