import { describe, expect, it } from "vitest";
import { api, learn, newKey, ok, onlyTree } from "./api-helpers";
import { chat, uniqueModel } from "./helpers";
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
    for (const order of ["A-1", "B-22", "C-333"]) await learn(ask(model, order), key);
    const tree = await onlyTree(key);
    let page: { min_bindings: number; data: TemplateSummary[] } = { min_bindings: 0, data: [] };
    for (let i = 0; i < 100 && !page.data.some((t) => t.confirmed); i++) {
      await new Promise((r) => setTimeout(r, 50));
      page = await ok(api(`/trees/${tree.id}/templates`, { token: key }));
    }
    const template = page.data.find((t) => t.confirmed);
    expect(template, JSON.stringify(page)).toBeDefined();
    expect(template?.bindings).toBeGreaterThanOrEqual(page.min_bindings);
    expect(template?.refuted).toBe(false);
    const slot = template?.slots.find((s) => s.copied);
    expect(slot?.values).toEqual(expect.arrayContaining(["A-1", "B-22", "C-333"]));
    // The listed template is the one that serves a fourth order.
    const fourth = await chat(ask(model, "D-4444"), { key });
    expect(fourth.headers.get("muscle-mem-cache")).toBe("hit");
    expect(fourth.headers.get("muscle-mem-template")).toBe(template?.id);
    await fourth.arrayBuffer();
    // Its hit is counted on the template.
    let hits = 0;
    for (let i = 0; i < 100 && hits < 1; i++) {
      await new Promise((r) => setTimeout(r, 20));
      const after = await ok<{ data: TemplateSummary[] }>(api(`/trees/${tree.id}/templates`, { token: key }));
      hits = after.data.find((t) => t.id === template?.id)?.hits ?? 0;
    }
    expect(hits).toBe(1);
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
