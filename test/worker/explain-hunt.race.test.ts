import { afterEach, describe, expect, it, vi } from "vitest";
import { learn, newKey, onlyTree } from "./api-helpers";
import { uniqueModel } from "./helpers";
import { explained, sendOn } from "./explain-hunt.support";

/**
 * Why-it-missed hunt, races (docs/api.md "Why it missed"): the explanation never contradicts what the
 * lookup saw. The clock is the test's (Date faked and held): a recording that lands in the same
 * millisecond as a request starts is one the request's lookup saw, since the lookup follows the start.
 * Failed before its fix: the explanation left out every row created at or after the request's start, so
 * it said `new-tree` of a tree the lookup had found (`muscle-mem-miss: new-branch; depth=0`).
 */

afterEach(() => vi.useRealTimers());

const ask = (text: string) => ({ messages: [{ role: "user", content: text }] });

describe("why it missed: a recording that raced the request", () => {
  it("Should never say new-tree of a tree the lookup found, and compare the request with the sibling recorded in the same millisecond", async () => {
    const key = newKey();
    const model = uniqueModel("why-race");
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() });
    await learn({ model, ...ask("Refund order A-1 please") }, key);
    const tree = await onlyTree(key);
    const id = `why-race-${model}`;
    const { res } = await sendOn("chat", model, ask("Refund order A-2 please"), key, id);
    expect(res.headers.get("muscle-mem-miss")).toBe("new-branch; depth=0");
    const row = await explained(id, key);
    expect(row.explanation).toMatchObject({ kind: "new-branch", depth: 0, tree_id: tree.id, frame: null });
    expect(row.explanation?.divergence).toMatchObject({ index: 0, siblings: 1, field: "messages[0].content" });
    expect(row.explanation?.divergence?.diff).toMatchObject({ incoming: "2", recorded: "1" });
  });

  it("Should say new-tree when the lookup found no tree, though the miss's own recording lands in the same millisecond", async () => {
    const key = newKey();
    const model = uniqueModel("why-race-own");
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() });
    const id = `why-race-own-${model}`;
    const { res } = await sendOn("chat", model, ask("Refund order A-1 please"), key, id);
    expect(res.headers.get("muscle-mem-miss")).toBe("new-tree");
    const row = await explained(id, key);
    expect(row.explanation).toMatchObject({ kind: "new-tree", depth: 0, divergence: null, frame: { trees_compared: 0 } });
  });
});
