import { describe, expect, it } from "vitest";
import { REFUND_TOOLS } from "../../tools/refund-desk";
import { api, learn, newKey, ok, onlyTree } from "./api-helpers";
import { uniqueModel } from "./helpers";

interface Match {
  hash: string;
  depth: number;
  role: string;
  preview: string;
  path: string[];
}

describe("GET /api/trees/:treeId/search", () => {
  it("Should find nodes by text, tool name and tool argument, each with its path from the root", async () => {
    const key = newKey();
    const model = uniqueModel("search");
    for (const order of ["A-1", "B-22"])
      await learn({ model, tools: REFUND_TOOLS, messages: [{ role: "user", content: `Refund order #${order} please` }] }, key);
    const tree = await onlyTree(key);
    const byText = await ok<{ data: Match[] }>(api(`/trees/${tree.id}/search?q=${encodeURIComponent("ORDER #b-22")}`, { token: key }));
    expect(byText.data.map((m) => m.role)).toEqual(["user"]);
    expect(byText.data[0].path).toEqual([byText.data[0].hash]);
    const byTool = await ok<{ data: Match[] }>(api(`/trees/${tree.id}/search?q=get_order`, { token: key }));
    expect(byTool.data).toHaveLength(2);
    expect(byTool.data.every((m) => m.role === "assistant" && m.depth === 2 && m.path.length === 2)).toBe(true);
    const byArgument = await ok<{ data: Match[] }>(api(`/trees/${tree.id}/search?q=order_id`, { token: key }));
    expect(byArgument.data.map((m) => m.role)).toEqual(["assistant", "assistant"]);
    const none = await ok<{ data: Match[] }>(api(`/trees/${tree.id}/search?q=nothing-like-this`, { token: key }));
    expect(none.data).toEqual([]);
  });

  it("Should answer 400 for an empty query and 404 for another tenant's tree", async () => {
    const key = newKey();
    await learn({ model: uniqueModel(), messages: [{ role: "user", content: "x" }] }, key);
    const tree = await onlyTree(key);
    expect((await api(`/trees/${tree.id}/search?q=`, { token: key })).status).toBe(400);
    expect((await api(`/trees/${tree.id}/search?q=x`, { token: newKey() })).status).toBe(404);
  });
});
