import { describe, expect, it } from "vitest";
import { countDifferences, firstDifference, shortDiff } from "../../src/engine/explain/compare";
import { closestChild, explainMiss, frameDivergence, missHeaderValue, type DivergenceFacts } from "../../src/engine/explain/explanation";

const msg = (role: string, body: Record<string, unknown>) => JSON.stringify({ role, ...body });
const call = (amount: number) =>
  msg("assistant", {
    content: null,
    tool_calls: [{ id: "call_0", type: "function", function: { name: "refund", arguments: JSON.stringify({ order: "A-1", amount_cents: amount }) } }],
  });

describe("firstDifference", () => {
  it("Should name the first differing field, descending into JSON held in strings", () => {
    const d = firstDifference(JSON.parse(call(1999)), JSON.parse(call(2999)));
    expect(d).toEqual({ path: "tool_calls[0].function.arguments.amount_cents", incoming: 1999, recorded: 2999 });
  });

  it("Should report equal values as no difference, key order aside", () => {
    expect(firstDifference({ a: 1, b: [1, { c: "x" }] }, { b: [1, { c: "x" }], a: 1 })).toBeNull();
  });

  it("Should name a missing field and quote keys that are not plain names", () => {
    expect(firstDifference({ "a b": 1 }, {})).toEqual({ path: '["a b"]', incoming: 1, recorded: undefined });
    expect(firstDifference([1, 2], [1, 2, 3])).toEqual({ path: "[2]", incoming: undefined, recorded: 3 });
  });

  it("Should compare a JSON string against plain text as text", () => {
    expect(firstDifference({ content: '{"a":1}' }, { content: "done" })).toEqual({ path: "content", incoming: '{"a":1}', recorded: "done" });
  });
});

describe("countDifferences and shortDiff", () => {
  it("Should count differing leaves", () => {
    expect(countDifferences({ a: 1, b: 2, c: [1, 2] }, { a: 1, b: 3, c: [1, 4, 5] })).toBe(3);
  });

  it("Should keep the shared context around the differing part", () => {
    expect(shortDiff("refund order A-1 now", "refund order A-22 now")).toEqual({ before: "refund order A-", incoming: "1", recorded: "22", after: " now" });
    const long = "x".repeat(100);
    const d = shortDiff(`${long}a${long}`, `${long}b${long}`, 5, 10);
    expect(d).toEqual({ before: "…xxxxx", incoming: "a", recorded: "b", after: "xxxxx…" });
  });
});

describe("explainMiss", () => {
  const path = [
    { hash: "h1", role: "system", json: msg("system", { content: "be brief" }) },
    { hash: "h2", role: "user", json: msg("user", { content: "refund order A-1" }) },
    { hash: "h3", role: "assistant", json: call(1999) },
  ];
  const facts: DivergenceFacts = { treeId: "t", treeExists: true, path, depth: 2, children: [], frameJson: '{"model":"m"}', trees: [] };

  it("Should point at the first differing message and the closest recorded sibling", () => {
    const children = [
      { hash: "c1", role: "assistant", json: msg("assistant", { content: "no" }), observations: 5 },
      { hash: "c2", role: "assistant", json: call(2999), observations: 1 },
    ];
    const e = explainMiss({ ...facts, children });
    expect(e.kind).toBe("new-branch");
    expect(e.depth).toBe(2);
    expect(e.divergence).toMatchObject({
      index: 2,
      node: "h3",
      parent: "h2",
      siblings: 2,
      closest: { node: "c2" },
      field: "messages[2].tool_calls[0].function.arguments.amount_cents",
    });
    expect(e.divergence?.diff).toEqual({ before: "", incoming: "1", recorded: "2", after: "999" });
  });

  it("Should prefer a sibling of the same role", () => {
    const children = [
      { hash: "u", role: "user", json: msg("user", { content: "refund order A-1" }), observations: 9 },
      { hash: "a", role: "assistant", json: msg("assistant", { content: "x" }), observations: 1 },
    ];
    expect(closestChild(path[2], children)?.hash).toBe("a");
  });

  it("Should say when the first message already differs (the fork is the root) and when nothing is recorded there", () => {
    const e = explainMiss({ ...facts, depth: 0 });
    expect(e.divergence).toMatchObject({ index: 0, parent: "t", siblings: 0, closest: null, field: null, diff: null });
  });

  it("Should call a fully matched path unconfirmed", () => {
    expect(explainMiss({ ...facts, depth: 3 })).toMatchObject({ kind: "unconfirmed", depth: 3, divergence: null });
  });

  it("Should name the frame field that differs from the nearest tree of a new tree", () => {
    const trees = [
      { id: "far", model: "other", frame: JSON.stringify({ model: "other", temperature: 1, tools: [] }) },
      { id: "near", model: "m", frame: JSON.stringify({ model: "m", temperature: 0.2, tools: [] }) },
    ];
    const e = explainMiss({ ...facts, treeExists: false, frameJson: JSON.stringify({ model: "m", temperature: 0.5, tools: [] }), trees });
    expect(e).toMatchObject({ kind: "new-tree", depth: 0, frame: { nearest_tree: "near", field: "temperature", trees_compared: 2 } });
    expect(frameDivergence("{}", []).field).toBeNull();
  });

  it("Should write the header value with the depth only where it means something", () => {
    expect(missHeaderValue("new-branch", 5)).toBe("new-branch; depth=5");
    expect(missHeaderValue("new-tree", 0)).toBe("new-tree");
    expect(missHeaderValue("unknown", null)).toBe("unknown");
  });
});
