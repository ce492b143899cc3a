import { describe, expect, it } from "vitest";
import { api, ok, type Tree, importFor } from "./api-helpers";
import { gemini, geminiGenerations, recordedGemini } from "./gemini.support";

const uniqueModel = () => `gem-x-${crypto.randomUUID().slice(0, 8)}`;
const newKey = () => `gm-x-${crypto.randomUUID()}`;
const ndjson = { "content-type": "application/x-ndjson" };
const tools = [
  {
    functionDeclarations: [
      { name: "get_order", description: "Look up an order.", parameters: { type: "OBJECT", properties: { order_id: { type: "STRING" } } } },
    ],
  },
];
const system = { parts: [{ text: "You are a refund desk." }] };
const ask = { systemInstruction: system, tools, generationConfig: { temperature: 0 }, contents: [{ role: "user", parts: [{ text: "Refund order #A-1." }] }] };

interface ExportedLine {
  model: string;
  tools: unknown[] | null;
  params: Record<string, unknown>;
  contents: Array<{ role: string; parts: Array<Record<string, unknown>> }>;
  scripted_assistant_idx: number[];
}

/** A served body without what a replay makes fresh (response ids, call ids). */
function withoutIds(text: string): string {
  return text.replace(/"responseId":"[^"]*"/g, '"responseId":"ID"').replace(/call_mm[0-9a-z]+/g, "ID");
}

async function exported(key: string): Promise<string> {
  const page = await ok<{ data: Tree[] }>(api("/trees", { token: key }));
  expect(page.data).toHaveLength(1);
  const res = await api(`/trees/${page.data[0].id}/export`, { token: key });
  expect(res.status).toBe(200);
  return res.text();
}

function importInto(key: string, jsonl: string): Promise<{ nodes_inserted: number; answers: number; trees: number }> {
  return ok(importFor(key, { body: jsonl, headers: ndjson }));
}

async function hit(model: string, body: unknown, key: string, stream = false): Promise<string> {
  const res = await gemini(model, body, { key, stream, headers: { "cache-control": "only-if-cached" } });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  expect(res.headers.get("muscle-mem-cache")).toBe("hit");
  return text;
}

describe("export and import of trees recorded through Gemini generateContent", () => {
  it("Should export Gemini contents with functionCall parts and seed another tenant whose identical request hits with 0 model calls", async () => {
    const model = uniqueModel();
    const key = newKey();
    await (await gemini(model, ask, { key })).arrayBuffer();
    await recordedGemini(model, ask, { key });
    const jsonl = await exported(key);
    const line = JSON.parse(jsonl.trim()) as ExportedLine;
    expect(line.model).toBe(model);
    expect(line.params).toEqual({ "muscle-mem:api": "gemini", systemInstruction: system, generationConfig: { temperature: 0 } });
    expect(line.tools).toEqual(tools);
    expect(line.contents).toEqual([
      { role: "user", parts: [{ text: "Refund order #A-1." }] },
      { role: "model", parts: [{ text: "Let me look that order up." }, { functionCall: { name: "get_order", args: { order_id: "A-1" } } }] },
    ]);
    expect(line).not.toHaveProperty("messages");

    const other = newKey();
    expect(await importInto(other, jsonl)).toMatchObject({ trees: 1, nodes_inserted: 2, answers: 1 });
    expect(withoutIds(await hit(model, ask, other))).toBe(withoutIds(await hit(model, ask, key)));
    expect(await geminiGenerations(model)).toBe(1);
    expect((await importInto(other, jsonl)).nodes_inserted).toBe(0);
  });

  it("Should replay a streamed recording and a two-turn tool conversation from the imported tree", async () => {
    const model = uniqueModel();
    const key = newKey();
    await (await gemini(model, ask, { key, stream: true })).arrayBuffer();
    await recordedGemini(model, ask, { key });
    const afterLookup = {
      ...ask,
      contents: [
        ...ask.contents,
        { role: "model", parts: [{ text: "Let me look that order up." }, { functionCall: { name: "get_order", args: { order_id: "A-1" } } }] },
        { role: "user", parts: [{ functionResponse: { name: "get_order", response: { order_id: "A-1", status: "delivered", amount: 42.5 } } }] },
      ],
    };
    await (await gemini(model, afterLookup, { key, stream: true })).arrayBuffer();
    await recordedGemini(model, afterLookup, { key });
    expect(await geminiGenerations(model)).toBe(2);

    const jsonl = await exported(key);
    const line = JSON.parse(jsonl.trim()) as ExportedLine;
    expect(line.contents[2]).toEqual(afterLookup.contents[2]);
    expect(line.contents[3]).toEqual({ role: "model", parts: [{ functionCall: { name: "refund", args: { order_id: "A-1", amount: 42.5 } } }] });
    expect(line.scripted_assistant_idx).toEqual([]);

    const other = newKey();
    expect(await importInto(other, jsonl)).toMatchObject({ nodes_inserted: 4, answers: 2 });
    for (const body of [ask, afterLookup]) {
      expect(withoutIds(await hit(model, body, other, true))).toBe(withoutIds(await hit(model, body, key, true)));
      expect(withoutIds(await hit(model, body, other))).toBe(withoutIds(await hit(model, body, key)));
    }
    expect(await geminiGenerations(model)).toBe(2);
  });

  it("Should key function call ids as ordinals so an imported call with an id is answered by its functionResponse", async () => {
    const model = uniqueModel();
    const line = {
      model,
      tools: null,
      params: { "muscle-mem:api": "gemini" },
      contents: [
        { role: "user", parts: [{ text: "Refund order #C-3." }] },
        { role: "model", parts: [{ functionCall: { name: "get_order", id: "call_0", args: { order_id: "C-3" } } }] },
        { role: "user", parts: [{ functionResponse: { name: "get_order", id: "call_0", response: { status: "lost" } } }] },
        { role: "model", parts: [{ text: "Order C-3 is lost." }] },
      ],
    };
    const key = newKey();
    expect(await importInto(key, JSON.stringify(line))).toMatchObject({ nodes_inserted: 4, answers: 2 });
    // The client's own ids are not the export's: ids are keyed as ordinals.
    const contents = [
      line.contents[0],
      { role: "model", parts: [{ functionCall: { name: "get_order", id: "x-77", args: { order_id: "C-3" } } }] },
      { role: "user", parts: [{ functionResponse: { name: "get_order", id: "x-77", response: { status: "lost" } } }] },
    ];
    const served = JSON.parse(await hit(model, { contents }, key)) as { candidates: Array<{ content: unknown; finishReason: string }> };
    expect(served.candidates[0]).toMatchObject({ content: { role: "model", parts: [{ text: "Order C-3 is lost." }] }, finishReason: "STOP" });
    const first = JSON.parse(await hit(model, { contents: contents.slice(0, 1) }, key)) as {
      candidates: Array<{ content: { parts: Array<{ functionCall: { id: string } }> } }>;
    };
    expect(first.candidates[0].content.parts[0].functionCall.id).toMatch(/^call_mm/);
    expect(await geminiGenerations(model)).toBe(0);
  });

  it("Should carry a recorded answer's candidate metadata through import and export, and serve it on a hit as recorded", async () => {
    const model = uniqueModel();
    const safetyRatings = [{ category: "HARM_CATEGORY_HATE_SPEECH", probability: "NEGLIGIBLE" }];
    const citationMetadata = { citationSources: [{ startIndex: 0, endIndex: 9, uri: "https://example.com/refunds" }] };
    const metadata = { safetyRatings, citationMetadata };
    const line = {
      model,
      tools: null,
      params: { "muscle-mem:api": "gemini" },
      contents: [
        { role: "user", parts: [{ text: "What is the refund window?" }] },
        { role: "model", parts: [{ text: "Thirty days." }], "muscle-mem:candidate": metadata },
      ],
    };
    const key = newKey();
    expect(await importInto(key, JSON.stringify(line))).toMatchObject({ nodes_inserted: 2, answers: 1 });
    const ask = { contents: line.contents.slice(0, 1) };
    const served = JSON.parse(await hit(model, ask, key)) as { candidates: Array<Record<string, unknown>> };
    expect(served.candidates[0]).toMatchObject({ content: { role: "model", parts: [{ text: "Thirty days." }] }, safetyRatings, citationMetadata });
    expect(served.candidates[0]).not.toHaveProperty("muscle-mem:candidate");
    expect(await hit(model, ask, key, true)).toContain('"safetyRatings"');
    // The export carries the metadata on the answer's content, and another tenant's import serves it again.
    const jsonl = await exported(key);
    expect((JSON.parse(jsonl.trim()) as ExportedLine).contents[1]).toEqual(line.contents[1]);
    const other = newKey();
    expect(await importInto(other, jsonl)).toMatchObject({ nodes_inserted: 2, answers: 1 });
    expect(JSON.parse(await hit(model, ask, other))).toMatchObject({ candidates: [{ safetyRatings, citationMetadata }] });
    expect(await geminiGenerations(model)).toBe(0);
  });

  it("Should reject a bad Gemini line with 400 and its line number, storing nothing", async () => {
    const key = newKey();
    const good = {
      model: uniqueModel(),
      params: { "muscle-mem:api": "gemini" },
      contents: [
        { role: "user", parts: [{ text: "hi" }] },
        { role: "model", parts: [{ text: "hello" }] },
      ],
    };
    const bad = [
      { ...good, contents: [{ role: "wizard", parts: [{ text: "x" }] }] },
      { ...good, contents: [{ role: "user", parts: [{ functionCall: { args: {} } }] }] },
      { ...good, contents: [] },
      { ...good, model: "" },
      { ...good, params: { "muscle-mem:api": "gemini", cachedContent: "cachedContents/abc" } },
      // Candidate metadata only on a recorded answer, and only as an object.
      { ...good, contents: [{ ...good.contents[0], "muscle-mem:candidate": { safetyRatings: [] } }, good.contents[1]] },
      { ...good, contents: [good.contents[0], { ...good.contents[1], "muscle-mem:candidate": "rated" }] },
    ];
    for (const line of bad) {
      const res = await importFor(key, { body: `${JSON.stringify(good)}\n${JSON.stringify(line)}\n`, headers: ndjson });
      expect(res.status, JSON.stringify(line)).toBe(400);
      const error = (await res.json()) as { error: { type: string; param: string } };
      expect(error.error).toMatchObject({ type: "invalid_request_error", param: "line 2" });
    }
    const page = await ok<{ data: Tree[] }>(api("/trees", { token: key }));
    expect(page.data).toHaveLength(0);
  });
});
