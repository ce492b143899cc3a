import { describe, expect, it } from "vitest";
import { addRecent, RECENT_BUFFERED } from "../../src/store/tree/recent-gather";
import { emptyTally, mergeTally } from "../../src/store/tree/tally-batch";
import { recentRequest } from "../support/recent-request";

const row = recentRequest;

describe("recent-requests rows gathered between writes", () => {
  it("Should gather a tree's hits into one row: the count, the latest time and node, the tokens summed, the latency averaged", () => {
    const rows = addRecent(
      [],
      [row({ at: 1, node: "n1", latency_ms: 10 }), row({ at: 3, node: "n2", latency_ms: 20 }), row({ at: 2, node: "n3", latency_ms: 30 })],
    );
    expect(rows).toEqual([row({ at: 3, node: "n2", count: 3, latency_ms: 20, prompt_tokens: 300, completion_tokens: 60 })]);
  });

  it("Should keep every miss its own row, and keep groups apart by tree, outcome, status, template, route and bypass reason", () => {
    const rows = addRecent(
      [],
      [
        row({ outcome: "miss", node: null, prompt_tokens: null, completion_tokens: null }),
        row({ outcome: "miss", node: null, prompt_tokens: null, completion_tokens: null }),
        row({}),
        row({ tree_id: "t2" }),
        row({ outcome: "template", template_id: "a", node: null }),
        row({ outcome: "template", template_id: "b", node: null }),
        row({ status: 500 }),
        row({ route: "/v1/messages" }),
        row({ outcome: "bypass", reason: "no-store", node: null, prompt_tokens: null, completion_tokens: null }),
        row({ outcome: "bypass", reason: "n>1", node: null, prompt_tokens: null, completion_tokens: null }),
        row({ outcome: "bypass", reason: "no-store", node: null, prompt_tokens: null, completion_tokens: null }),
      ],
    );
    expect(rows.map((r) => [r.outcome, r.count])).toEqual([
      ["miss", 1],
      ["miss", 1],
      ["hit", 1],
      ["hit", 1],
      ["template", 1],
      ["template", 1],
      ["hit", 1],
      ["hit", 1],
      ["bypass", 1],
      ["bypass", 2],
    ]);
    expect(rows.at(-1)?.prompt_tokens).toBeNull();
  });

  it("Should gather again where tallies meet (an isolate's rows into its tree's HitTally), and keep at most RECENT_BUFFERED rows", () => {
    const a = emptyTally("t1");
    const b = emptyTally("t1");
    addRecent(a.recent, [row({ at: 1 }), row({ at: 2 })]);
    addRecent(b.recent, [row({ at: 5, node: "n9" })]);
    mergeTally(a, b);
    expect(a.recent).toEqual([row({ at: 5, node: "n9", count: 3, prompt_tokens: 300, completion_tokens: 60 })]);
    const misses = Array.from({ length: RECENT_BUFFERED + 7 }, (_, i) => row({ at: i, outcome: "miss", node: null }));
    const kept = addRecent([], misses);
    expect(kept).toHaveLength(RECENT_BUFFERED);
    expect(kept[0].at).toBe(7);
  });
});
