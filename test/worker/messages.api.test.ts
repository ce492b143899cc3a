import { describe, expect, it } from "vitest";
import { api, ok, type NodeSummary, type Tree, importFor } from "./api-helpers";
import { messageRecorded, postMessages } from "./messages.support";

describe("the trajectory API on Anthropic Messages trees", () => {
  it("Should read nodes, paths and exports in Anthropic's message format, and import the export into another tenant", async () => {
    const key = `sk-ant-${crypto.randomUUID()}`;
    const body = { model: "claude-api", max_tokens: 64, system: "You are a refund desk.", messages: [{ role: "user", content: "Refund order #A-1 please" }] };
    await (await postMessages(body, { key })).arrayBuffer();
    await messageRecorded(body, { key });
    const page = await ok<{ data: Tree[] }>(api("/trees", { token: key }));
    expect(page.data).toHaveLength(1);
    const tree = page.data[0];
    const level = await ok<{ data: NodeSummary[] }>(api(`/trees/${tree.id}/children`, { token: key }));
    expect(level.data).toHaveLength(1);
    const user = await ok<{ message: unknown }>(api(`/nodes/${level.data[0].hash}`, { token: key }));
    expect(user.message).toEqual({ role: "user", content: [{ type: "text", text: "Refund order #A-1 please" }] });
    const answers = await ok<{ data: NodeSummary[] }>(api(`/trees/${tree.id}/children?parent=${level.data[0].hash}`, { token: key }));
    // The view the dashboard shows, built by the Anthropic provider: its tool_use block as a call with its arguments.
    const answer = await ok<{ view: { calls: unknown[]; results: unknown[] } }>(api(`/nodes/${answers.data[0].hash}`, { token: key }));
    expect(answer.view.calls).toEqual([{ name: "get_order", id: "toolu_0", args: '{"order_id":"A-1"}' }]);
    expect(answer.view.results).toEqual([]);
    const path = await ok<{ messages: Array<{ role: string; content: Array<Record<string, unknown>> }> }>(
      api(`/nodes/${answers.data[0].hash}/path`, { token: key }),
    );
    expect(path.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    // The refund desk looks the order up first: a text block and a tool_use block with an ordinal id.
    expect(path.messages[1].content).toContainEqual({ type: "tool_use", id: "toolu_0", name: "get_order", input: { order_id: "A-1" } });
    for (const m of path.messages) for (const block of m.content) expect(typeof block.text === "object").toBe(false);

    const jsonl = await (await api(`/trees/${tree.id}/export`, { token: key })).text();
    const line = JSON.parse(jsonl.trim()) as { messages: unknown[]; params: Record<string, unknown> };
    expect(line.messages).toEqual(path.messages);
    expect(line.params["muscle-mem:api"]).toBe("anthropic");
    // The export seeds another tenant: its identical request is then served without the model.
    const other = `sk-ant-${crypto.randomUUID()}`;
    const imported = await ok<{ nodes_inserted: number; answers: number }>(
      importFor(other, { body: jsonl, headers: { "content-type": "application/x-ndjson" } }),
    );
    expect(imported).toMatchObject({ nodes_inserted: 2, answers: 1 });
    const served = await postMessages(body, { key: other, headers: { "cache-control": "only-if-cached" } });
    expect(served.status).toBe(200);
    const message = (await served.json()) as { content: unknown[]; stop_reason: string };
    expect(message.content).toContainEqual({ type: "tool_use", id: expect.stringMatching(/^toolu_/), name: "get_order", input: { order_id: "A-1" } });
    expect(message.stop_reason).toBe("tool_use");
    const again = await ok<{ nodes_inserted: number }>(importFor(other, { body: jsonl, headers: { "content-type": "application/x-ndjson" } }));
    expect(again.nodes_inserted).toBe(0);
    // A line that claims to be Anthropic but is not a Messages request is a clear 400.
    const broken = await importFor(other, {
      body: JSON.stringify({ ...JSON.parse(jsonl.trim()), messages: [{ role: "user" }] }),
      headers: { "content-type": "application/x-ndjson" },
    });
    expect(broken.status).toBe(400);
  });
});
