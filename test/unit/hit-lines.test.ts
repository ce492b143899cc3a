import { describe, expect, it } from "vitest";
import { HitLines, MAX_HIT_GROUPS } from "../../src/observability/hit-lines";
import type { RequestLogLine } from "../../src/observability/log";

const hit = (tree: string, total: number, route = "/v1/chat/completions"): RequestLogLine => ({
  event: "request",
  level: "info",
  request_id: "r",
  method: "POST",
  route,
  status: 200,
  outcome: "hit",
  tree,
  reason: null,
  ms: { lookup: 0, total },
});

describe("gathered hit lines", () => {
  it("Should gather one line per tree, route and outcome with count, mean and max", () => {
    const lines = new HitLines();
    expect(lines.due()).toBe(false);
    lines.add(hit("t1", 2), false, 1_000);
    lines.add(hit("t1", 4), false, 2_000);
    lines.add(hit("t1", 9), true, 3_000);
    lines.add(hit("t2", 1, "/v1/messages"), false, 4_000);
    expect(lines.due()).toBe(true);
    lines.markScheduled();
    expect(lines.due()).toBe(false);
    expect(lines.drain()).toEqual([
      {
        event: "hits",
        level: "info",
        tree: "t1",
        route: "/v1/chat/completions",
        outcome: "hit",
        count: 2,
        ms: { mean: 3, max: 4 },
        first_at: new Date(1_000).toISOString(),
        last_at: new Date(2_000).toISOString(),
      },
      {
        event: "hits",
        level: "info",
        tree: "t1",
        route: "/v1/chat/completions",
        outcome: "template",
        count: 1,
        ms: { mean: 9, max: 9 },
        first_at: new Date(3_000).toISOString(),
        last_at: new Date(3_000).toISOString(),
      },
      {
        event: "hits",
        level: "info",
        tree: "t2",
        route: "/v1/messages",
        outcome: "hit",
        count: 1,
        ms: { mean: 1, max: 1 },
        first_at: new Date(4_000).toISOString(),
        last_at: new Date(4_000).toISOString(),
      },
    ]);
    expect(lines.drain()).toEqual([]);
    expect(lines.due()).toBe(false);
  });

  it("Should hand back the oldest group's line when the buffer is full, losing no hit", () => {
    const lines = new HitLines();
    for (let i = 0; i < MAX_HIT_GROUPS; i++) expect(lines.add(hit(`t${i}`, 1), false)).toBeNull();
    lines.add(hit("t0", 1), false);
    const early = lines.add(hit("one-more", 1), false);
    expect(early).toMatchObject({ tree: "t0", count: 2 });
    const rest = lines.drain();
    expect(rest).toHaveLength(MAX_HIT_GROUPS);
    expect(rest.reduce((n, l) => n + l.count, 0) + (early?.count ?? 0)).toBe(MAX_HIT_GROUPS + 2);
  });
});
