import { describe, expect, it } from "vitest";
import { api, learn, newKey, ok, onlyTree } from "./api-helpers";
import { chat, eventually, uniqueModel } from "./helpers";
import { learningRan, settled } from "./settled";
import { REFUND_TOOLS } from "../../tools/refund-desk";

interface TemplateSummary {
  id: string;
  bindings: number;
  hits: number;
  confirmed: boolean;
  refuted: boolean;
  slots: Array<{ type: string; copied: boolean; values: string[] }>;
}

const ask = (model: string, order: string) => ({ model, tools: REFUND_TOOLS, messages: [{ role: "user", content: `Refund order #${order} please` }] });

describe("GET /api/trees/:treeId/templates", () => {
  it("Should list the templates a tree learned, with their slots and confirmation", async () => {
    const key = newKey();
    const model = uniqueModel();
    // settled: every recording has reached the tree's learner; learningRan: its queued learning ran now.
    await settled(async () => {
      for (const order of ["A-1", "B-22", "C-333"]) await learn(ask(model, order), key);
    });
    await learningRan();
    const tree = await onlyTree(key);
    let page: { min_bindings: number; data: TemplateSummary[] } = { min_bindings: 0, data: [] };
    await eventually(async () => {
      page = await ok(api(`/trees/${tree.id}/templates`, { token: key }));
      return page.data.some((t) => t.confirmed);
    }, 20_000).catch(() => undefined);
    const template = page.data.find((t) => t.confirmed);
    expect(template, JSON.stringify(page)).toBeDefined();
    expect(template?.bindings).toBeGreaterThanOrEqual(page.min_bindings);
    expect(template?.refuted).toBe(false);
    const slot = template?.slots.find((s) => s.copied);
    expect(slot?.values).toEqual(expect.arrayContaining(["A-1", "B-22", "C-333"]));
    // The listed template is the one that serves a fourth order.
    // settled: the hit's counter flush runs in its waitUntil (COUNTER_FLUSH_MS and TALLY_FLUSH_MS are 0 in tests).
    const fourth = await settled(async () => {
      const res = await chat(ask(model, "D-4444"), { key });
      await res.arrayBuffer();
      return res;
    });
    expect(fourth.headers.get("muscle-mem-cache")).toBe("hit");
    expect(fourth.headers.get("muscle-mem-template")).toBe(template?.id);
    // Its hit is counted on the template.
    const after = await ok<{ data: TemplateSummary[] }>(api(`/trees/${tree.id}/templates`, { token: key }));
    expect(after.data.find((t) => t.id === template?.id)?.hits).toBe(1);
  });

  it("Should answer 404 for another tenant's tree and 400 for a malformed id", async () => {
    const key = newKey();
    await learn(ask(uniqueModel(), "A-1"), key);
    const tree = await onlyTree(key);
    expect((await api(`/trees/${tree.id}/templates`, { token: newKey() })).status).toBe(404);
    expect((await api(`/trees/not-a-hash/templates`, { token: key })).status).toBe(400);
    expect((await api(`/trees/${tree.id}/templates`, { token: null })).status).toBe(401);
  });
});
