import { describe, expect, it } from "vitest";
import { api, ok, type Tree, importFor } from "./api-helpers";
import { recordClientCall, recordedResponse, responses } from "./responses.support";

const model = () => `echo-rx-${crypto.randomUUID().slice(0, 8)}`;
const tools = [
  {
    type: "function",
    name: "get_order",
    description: "Look up an order.",
    parameters: { type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"] },
    strict: false,
  },
];
const newKey = () => `sk-rx-${crypto.randomUUID()}`;
const ndjson = { "content-type": "application/x-ndjson" };

interface ExportedLine {
  model: string;
  tools: unknown[] | null;
  params: Record<string, unknown>;
  input: Array<Record<string, unknown>>;
  scripted_assistant_idx: number[];
}

/** A served body with the ids, timestamps and sequence a replay makes fresh taken out. */
function withoutIds(text: string): string {
  return text.replace(/(resp|msg|fc|call)_mm[0-9a-z]+/g, "ID").replace(/"created_at":\d+/g, '"created_at":0');
}

async function treeOf(key: string): Promise<Tree> {
  const page = await ok<{ data: Tree[] }>(api("/trees", { token: key }));
  expect(page.data).toHaveLength(1);
  return page.data[0];
}

async function exported(key: string): Promise<string> {
  const res = await api(`/trees/${(await treeOf(key)).id}/export`, { token: key });
  expect(res.status).toBe(200);
  return res.text();
}

async function importInto(key: string, jsonl: string): Promise<{ nodes_inserted: number; answers: number; trees: number }> {
  return ok(importFor(key, { body: jsonl, headers: ndjson }));
}

/** The request served from the tree (only-if-cached: a miss would be a 504, never the model). */
async function hit(body: unknown, key: string): Promise<string> {
  const res = await responses(body, { key, headers: { "cache-control": "only-if-cached" } });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  expect(res.headers.get("muscle-mem-cache")).toBe("hit");
  return text;
}

describe("export and import of trees recorded through POST /v1/responses", () => {
  it("Should export Responses input items and seed another tenant whose identical request hits (JSON)", async () => {
    const key = newKey();
    const body = {
      model: model(),
      instructions: "You are a refund desk.",
      tools,
      tool_choice: "auto",
      input: [{ role: "user", content: "Refund order #A-1." }],
    };
    await (await responses(body, { key })).arrayBuffer();
    await recordedResponse(body, { key });
    const jsonl = await exported(key);
    const line = JSON.parse(jsonl.trim()) as ExportedLine;
    expect(line.params["muscle-mem:api"]).toBe("openai-responses");
    expect(line.params.instructions).toBe("You are a refund desk.");
    expect(line.params.tool_choice).toBe("auto");
    expect(line.tools).toEqual(tools);
    expect(line.input).toEqual([
      { type: "message", role: "user", content: [{ type: "input_text", text: "Refund order #A-1." }] },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "echo: Refund order #A-1.", annotations: [] }] },
    ]);
    expect(line).not.toHaveProperty("messages");

    const other = newKey();
    expect(await importInto(other, jsonl)).toMatchObject({ trees: 1, nodes_inserted: 2, answers: 1 });
    const served = await hit(body, other);
    expect(withoutIds(served)).toBe(withoutIds(await hit(body, key)));
    expect((await importInto(other, jsonl)).nodes_inserted).toBe(0);
  });

  it("Should replay a streamed recording from the imported tree as the same event stream", async () => {
    const key = newKey();
    const body = { model: model(), input: [{ role: "user", content: "stream this" }] };
    await (await responses({ ...body, stream: true }, { key })).arrayBuffer();
    await recordedResponse(body, { key });
    const other = newKey();
    expect(await importInto(other, await exported(key))).toMatchObject({ nodes_inserted: 2, answers: 1 });
    const streamed = { ...body, stream: true };
    const served = await hit(streamed, other);
    expect(served).toContain("response.output_text.delta");
    expect(withoutIds(served)).toBe(withoutIds(await hit(streamed, key)));
  });

  it("Should carry function_call and function_call_output items with their call_id through a two-turn tool conversation", async () => {
    const key = newKey();
    const first = { model: model(), tools, input: [{ role: "user", content: "Refund order #A-1." }] };
    // The client runs a tool of its own and sends the call and its output back, as @openai/agents does.
    const second = await recordClientCall(first, key);
    const jsonl = await exported(key);
    const line = JSON.parse(jsonl.trim()) as ExportedLine;
    expect(line.input.slice(3, 5)).toEqual([
      { type: "function_call", call_id: "call_0", name: "get_order", arguments: '{"order_id":"A-1"}' },
      { type: "function_call_output", call_id: "call_0", output: '{"status":"delivered"}' },
    ]);
    // The client's function call was sent, never generated.
    expect(line.scripted_assistant_idx).toEqual([3]);

    const other = newKey();
    expect(await importInto(other, jsonl)).toMatchObject({ nodes_inserted: 6, answers: 2 });
    expect(withoutIds(await hit(first, other))).toBe(withoutIds(await hit(first, key)));
    expect(withoutIds(await hit(second, other))).toBe(withoutIds(await hit(second, key)));
    // The function call the client sent is a path node, not an answer: the request before it misses.
    const before = await responses({ ...second, input: second.input.slice(0, 3) }, { key: other, headers: { "cache-control": "only-if-cached" } });
    expect(before.status).toBe(504);
    await before.arrayBuffer();
  });

  it("Should import a recorded function_call answer and serve it with a fresh call_id", async () => {
    const m = model();
    const line = {
      model: m,
      tools,
      params: { "muscle-mem:api": "openai-responses", instructions: "Be brief." },
      input: [
        { role: "user", content: [{ type: "input_text", text: "Refund order #B-2." }] },
        { type: "function_call", call_id: "call_0", name: "get_order", arguments: '{"order_id": "B-2"}' },
      ],
    };
    const key = newKey();
    expect(await importInto(key, JSON.stringify(line))).toMatchObject({ nodes_inserted: 2, answers: 1 });
    const served = JSON.parse(await hit({ model: m, tools, instructions: "Be brief.", input: "Refund order #B-2." }, key)) as {
      output: Array<Record<string, unknown>>;
    };
    expect(served.output).toEqual([
      {
        id: expect.stringMatching(/^fc_mm/),
        type: "function_call",
        status: "completed",
        arguments: '{"order_id": "B-2"}',
        call_id: expect.stringMatching(/^call_mm/),
        name: "get_order",
      },
    ]);
  });

  it("Should reject a bad Responses line with 400 and its line number, storing nothing", async () => {
    const key = newKey();
    const good = {
      model: model(),
      params: { "muscle-mem:api": "openai-responses" },
      input: [
        { role: "user", content: "fine" },
        { type: "message", role: "assistant", content: "ok" },
      ],
    };
    const bad = {
      ...good,
      input: [
        { role: "user", content: "x" },
        { type: "function_call_output", call_id: "call_9", output: "orphan" },
      ],
    };
    const lines = [
      bad,
      { ...good, input: [{ role: "wizard", content: "x" }] },
      { ...good, input: "not a list" },
      { ...good, params: { "muscle-mem:api": "openai-responses", store: true } },
      { ...good, params: { "muscle-mem:api": "openai-assistants" } },
    ];
    for (const line of lines) {
      const res = await importFor(key, { body: `${JSON.stringify(good)}\n${JSON.stringify(line)}\n`, headers: ndjson });
      expect(res.status).toBe(400);
      const error = (await res.json()) as { error: { type: string; param: string } };
      expect(error.error).toMatchObject({ type: "invalid_request_error", param: "line 2" });
    }
    const page = await ok<{ data: Tree[] }>(api("/trees", { token: key }));
    expect(page.data).toHaveLength(0);
  });
});
