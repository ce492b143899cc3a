import { describe, expect, it } from "vitest";
import { api, ok, onlyTree, type NodeSummary } from "./api-helpers";
import { gemini, recordedGemini } from "./gemini.support";
import { messageRecorded, postMessages } from "./messages.support";
import { recordClientCall } from "./responses.support";

interface NodeRead {
  role: string;
  message: Record<string, unknown>;
}

/** The node path of a tree, root's child first, following each level's first child: summaries and full node reads. */
async function firstPath(key: string): Promise<Array<NodeSummary & { read: NodeRead }>> {
  const tree = await onlyTree(key);
  const out: Array<NodeSummary & { read: NodeRead }> = [];
  for (let parent = tree.id; ; ) {
    const page = await ok<{ data: NodeSummary[] }>(api(`/trees/${tree.id}/children?parent=${parent}`, { token: key }));
    if (page.data.length === 0) return out;
    const node = page.data[0];
    out.push({ ...node, read: await ok<NodeRead>(api(`/nodes/${node.hash}`, { token: key })) });
    parent = node.hash;
  }
}

const responsesTools = [
  { type: "function", name: "get_order", description: "Look up an order.", parameters: { type: "object", properties: { order_id: { type: "string" } } } },
];
const geminiTools = [
  {
    functionDeclarations: [
      { name: "get_order", description: "Look up an order.", parameters: { type: "OBJECT", properties: { order_id: { type: "STRING" } } } },
    ],
  },
];

describe("node reads and previews of trees recorded through other APIs", () => {
  it("Should show a Responses tree's text, function call (name, arguments) and function output in node reads, previews and the path", async () => {
    const key = `sk-nodes-rx-${crypto.randomUUID()}`;
    const first = { model: `echo-nodes-${crypto.randomUUID().slice(0, 8)}`, tools: responsesTools, input: [{ role: "user", content: "Refund order #A-1." }] };
    await recordClientCall(first, key);

    const path = await firstPath(key);
    expect(path.map((n) => n.role)).toEqual(["user", "assistant", "user", "assistant", "tool", "assistant"]);
    expect(path.map((n) => n.preview)).toEqual([
      "Refund order #A-1.",
      "echo: Refund order #A-1.",
      "Look it up.",
      "→ get_order()",
      '[call_0] {"status":"delivered"}',
      "echo:",
    ]);
    expect(path[0].read.message).toEqual({
      role: "user",
      items: [{ type: "message", role: "user", content: [{ type: "input_text", text: "Refund order #A-1." }] }],
    });
    expect(path[1].read.message).toEqual({
      role: "assistant",
      items: [{ type: "message", role: "assistant", content: [{ type: "output_text", text: "echo: Refund order #A-1.", annotations: [] }] }],
    });
    expect(path[3].read.message).toEqual({
      role: "assistant",
      items: [{ type: "function_call", call_id: "call_0", name: "get_order", arguments: '{"order_id":"A-1"}' }],
    });
    expect(path[4].read.message).toEqual({ role: "tool", items: [{ type: "function_call_output", call_id: "call_0", output: '{"status":"delivered"}' }] });

    // Search matches and prune roots read the same previews.
    const found = await ok<{ data: Array<{ preview: string }> }>(api(`/trees/${path[0].parent}/search?q=delivered`, { token: key }));
    expect(found.data.map((m) => m.preview)).toEqual(['[call_0] {"status":"delivered"}']);
    const dry = await ok<{ roots: Array<{ preview: string }> }>(api(`/nodes/${path[3].hash}/prune`, { token: key }));
    expect(dry.roots.map((r) => r.preview)).toEqual(["→ get_order()"]);

    // The path is the `input` a client sends, as the export writes it.
    const read = await ok<{ messages: unknown[] }>(api(`/nodes/${path[5].hash}/path`, { token: key }));
    const line = JSON.parse((await (await api(`/trees/${(await onlyTree(key)).id}/export`, { token: key })).text()).trim()) as { input: unknown[] };
    expect(read.messages).toEqual(line.input);
    expect(read.messages).toHaveLength(6);
  });

  it("Should show a Gemini tree's text, functionCall (name, args as an object) and functionResponse in node reads, previews and the path", async () => {
    const key = `gm-nodes-${crypto.randomUUID()}`;
    const model = `gem-nodes-${crypto.randomUUID().slice(0, 8)}`;
    const ask = { tools: geminiTools, contents: [{ role: "user", parts: [{ text: "Refund order #A-1." }] }] };
    await (await gemini(model, ask, { key })).arrayBuffer();
    await recordedGemini(model, ask, { key });
    const call = { role: "model", parts: [{ text: "Let me look that order up." }, { functionCall: { name: "get_order", args: { order_id: "A-1" } } }] };
    const result = { role: "user", parts: [{ functionResponse: { name: "get_order", response: { order_id: "A-1", status: "delivered", amount: 42.5 } } }] };
    const afterLookup = { ...ask, contents: [...ask.contents, call, result] };
    await (await gemini(model, afterLookup, { key })).arrayBuffer();
    await recordedGemini(model, afterLookup, { key });

    const path = await firstPath(key);
    expect(path.map((n) => n.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(path[0]).toMatchObject({ preview: "Refund order #A-1.", read: { message: ask.contents[0] } });
    expect(path[1]).toMatchObject({ preview: "Let me look that order up. → get_order()", read: { message: call } });
    expect(path[2]).toMatchObject({ preview: '[get_order] {"amount":42.5,"order_id":"A-1","status":"delivered"}', read: { message: result } });
    expect(path[3].preview).toBe("→ refund()");
    expect(path[3].read.message).toEqual({ role: "model", parts: [{ functionCall: { name: "refund", args: { order_id: "A-1", amount: 42.5 } } }] });

    const read = await ok<{ messages: unknown[] }>(api(`/nodes/${path[3].hash}/path`, { token: key }));
    expect(read.messages).toEqual([...afterLookup.contents, path[3].read.message]);
  });

  it("Should preview an Anthropic tree's text and tool_use blocks as text, not as their JSON", async () => {
    const key = `sk-ant-nodes-${crypto.randomUUID()}`;
    const body = { model: "claude-nodes", max_tokens: 64, messages: [{ role: "user", content: "Refund order #A-1 please" }] };
    await (await postMessages(body, { key })).arrayBuffer();
    await messageRecorded(body, { key });
    const path = await firstPath(key);
    expect(path[0].preview).toBe("Refund order #A-1 please");
    expect(path[1].preview).toMatch(/→ get_order\(\)$/);
    expect(path[1].preview).not.toContain('"type"');
  });
});
