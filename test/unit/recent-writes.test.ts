import { describe, expect, it } from "vitest";
import { RecentWrites } from "../../src/store/objects/recent-writes";

/** A clock the test moves by hand. */
function clock(start = 1_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

describe("what a tree's writer wrote lately (whether a Worker's read of the primary still holds)", () => {
  it("Should be quiet for a key no write touched, and not for one written within the window, until the window passes", async () => {
    const c = clock();
    const writes = new RecentWrites(10_000, c.now);
    expect(writes.quiet("k", 2_000)).toBe(true);
    await writes.during(["k"], async () => c.advance(5));
    expect(writes.quiet("k", 2_000)).toBe(false);
    expect(writes.quiet("other", 2_000)).toBe(true);
    c.advance(2_000);
    // Ended exactly 2,000 ms ago: within (a coarse clock), so not quiet.
    expect(writes.quiet("k", 2_000)).toBe(false);
    c.advance(1);
    expect(writes.quiet("k", 2_000)).toBe(true);
  });

  it("Should not be quiet while a write of the key runs, however long ago it began", async () => {
    const c = clock();
    const writes = new RecentWrites(10_000, c.now);
    let finish = () => {};
    const running = writes.during(["k"], () => new Promise<void>((resolve) => (finish = resolve)));
    c.advance(60_000);
    expect(writes.quiet("k", 1)).toBe(false);
    finish();
    await running;
    c.advance(10);
    expect(writes.quiet("k", 5)).toBe(true);
  });

  it("Should count a write that failed as written (it may have committed)", async () => {
    const c = clock();
    const writes = new RecentWrites(10_000, c.now);
    await expect(writes.during(["k"], async () => Promise.reject(new Error("D1 timed out")))).rejects.toThrow("D1 timed out");
    expect(writes.quiet("k", 1_000)).toBe(false);
  });

  it("Should not be quiet for any key while a whole-tree write (import, prune, move) runs, nor within the window after it", async () => {
    const c = clock();
    const writes = new RecentWrites(10_000, c.now);
    let finish = () => {};
    const running = writes.during("tree", () => new Promise<void>((resolve) => (finish = resolve)));
    expect(writes.quiet("any", 1_000)).toBe(false);
    finish();
    await running;
    expect(writes.quiet("any", 1_000)).toBe(false);
    c.advance(1_001);
    expect(writes.quiet("any", 1_000)).toBe(true);
  });

  it("Should answer not quiet when asked about longer ago than it keeps, or a window that is no number", () => {
    const writes = new RecentWrites(10_000, clock().now);
    expect(writes.quiet("k", 10_000)).toBe(false);
    expect(writes.quiet("k", Number.NaN)).toBe(false);
    expect(writes.quiet("k", -1)).toBe(false);
    expect(writes.quiet("k", 9_999)).toBe(true);
  });

  it("Should keep only the keys written within keepMs", async () => {
    const c = clock();
    const writes = new RecentWrites(1_000, c.now);
    for (let i = 0; i < 50; i++) {
      await writes.during([`k${i}`, `k${i}`], async () => undefined);
      c.advance(100);
    }
    expect(writes.size).toBe(10);
  });
});
