import { describe, expect, it } from "vitest";
import { api, learn, newKey, ok, onlyTree } from "./api-helpers";
import { chat, eventually, recorded, uniqueModel } from "./helpers";
import { learningRan, settled } from "./settled";
import { REFUND_TOOLS } from "../../tools/refund-desk";

const ask = (model: string, order: string) => ({ model, tools: REFUND_TOOLS, messages: [{ role: "user", content: `Refund order #${order} please` }] });

interface Summary {
  bindings: number;
  not_serving: string | null;
}

/** `muscle-mem-template-miss`: why a template that matched the request did not serve it, in one line. */
describe("muscle-mem-template-miss", () => {
  it("Should say that a learned template is not yet confirmed, on the miss and on the templates API", async () => {
    const key = newKey();
    const model = uniqueModel();
    // settled: every recording has reached the tree's learner; learningRan: its queued learning ran now.
    await settled(async () => {
      for (const order of ["A-1", "B-22"]) await learn(ask(model, order), key);
    });
    await learningRan();
    const tree = await onlyTree(key);
    let page: { data: Summary[] } = { data: [] };
    await eventually(async () => {
      page = await ok(api(`/trees/${tree.id}/templates`, { token: key }));
      return page.data.length > 0;
    }, 20_000).catch(() => undefined);
    expect(page.data[0]?.not_serving).toBe("not yet confirmed: 2 of 3 bindings");
    const third = await chat(ask(model, "C-333"), { key });
    expect(third.headers.get("muscle-mem-cache")).toBe("miss");
    expect(third.headers.get("muscle-mem-template-miss")).toBe("not yet confirmed: 2 of 3 bindings");
    await third.arrayBuffer();
  });

  it("Should say that a declared answer waits for a second binding, and send no reason where no template matched", async () => {
    const key = newKey();
    const model = uniqueModel("decl");
    const bindings = (order: string) => ({ key, headers: { "muscle-mem-bindings": JSON.stringify({ order_id: order }) } });
    const first = await chat(ask(model, "A-1"), bindings("A-1"));
    expect(first.headers.get("muscle-mem-template-miss")).toBeNull();
    await first.arrayBuffer();
    await recorded(ask(model, "A-1"), bindings("A-1"));
    // settled: its recording ends within the test, not while the file's environment is torn down.
    const second = await settled(async () => {
      const res = await chat(ask(model, "B-72"), bindings("B-72"));
      await res.arrayBuffer();
      return res;
    });
    expect(second.headers.get("muscle-mem-cache")).toBe("miss");
    expect(second.headers.get("muscle-mem-template-miss")).toBe("declared answer not yet confirmed: 1 of 2 bindings");
  });
});
