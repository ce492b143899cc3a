import { describe, expect, it } from "vitest";
import { gemini, geminiGenerations, recordedGemini, sseChunks } from "./gemini.support";

const uniqueModel = (prefix = "gem") => `${prefix}-${crypto.randomUUID().slice(0, 8)}`;
const tools = [
  {
    functionDeclarations: [
      { name: "get_order", description: "Look up an order.", parameters: { type: "OBJECT", properties: { order_id: { type: "STRING" } } } },
    ],
  },
];
const ask = {
  systemInstruction: { parts: [{ text: "You are a refund desk." }] },
  tools,
  contents: [{ role: "user", parts: [{ text: "Refund order #A-1." }] }],
};

/** The conversation after get_order, with the tool result `status`. */
function afterLookup(status: string) {
  return {
    ...ask,
    contents: [
      ...ask.contents,
      { role: "model", parts: [{ text: "Let me look that order up." }, { functionCall: { name: "get_order", args: { order_id: "A-1" } } }] },
      { role: "user", parts: [{ functionResponse: { name: "get_order", response: { order_id: "A-1", status, amount: 42.5 } } }] },
    ],
  };
}

interface GenerateContent {
  candidates: Array<{ content: { role: string; parts: Array<{ text?: string; functionCall?: { name: string; args: unknown } }> }; finishReason: string }>;
  usageMetadata: { promptTokenCount: number };
}

describe("Gemini generateContent (cached)", () => {
  it("Should miss, then serve the repeat with the function call exactly and 0 model calls", async () => {
    const model = uniqueModel();
    const first = await gemini(model, ask);
    expect(first.headers.get("muscle-mem-cache")).toBe("miss");
    const missed = (await first.json()) as GenerateContent;
    await recordedGemini(model, ask);
    const again = await gemini(model, ask);
    expect(again.headers.get("muscle-mem-cache")).toBe("hit");
    expect(again.headers.get("server-timing")).toMatch(/parse;dur=\d+, lookup;dur=\d+/);
    const hit = (await again.json()) as GenerateContent;
    expect(hit.candidates[0].content).toEqual(missed.candidates[0].content);
    expect(hit.candidates[0].finishReason).toBe("STOP");
    expect(hit.usageMetadata.promptTokenCount).toBe(missed.usageMetadata.promptTokenCount);
    expect(await geminiGenerations(model)).toBe(1);
  });

  it("Should record a streamed miss and serve it streamed and as JSON", async () => {
    const model = uniqueModel();
    const first = await gemini(model, ask, { stream: true });
    expect(first.headers.get("muscle-mem-cache")).toBe("miss");
    const missed = sseChunks<GenerateContent>(await first.text());
    expect(missed.at(-1)?.candidates[0].finishReason).toBe("STOP");
    await recordedGemini(model, ask);
    const streamed = await gemini(model, ask, { stream: true });
    expect(streamed.headers.get("muscle-mem-cache")).toBe("hit");
    expect(streamed.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const chunks = sseChunks<GenerateContent>(await streamed.text());
    // Cut as the model streamed it: text in 7-character chunks, the call in one of its own.
    expect(chunks.map((c) => c.candidates[0].content.parts)).toEqual(missed.map((c) => c.candidates[0].content.parts));
    expect(chunks.flatMap((c) => c.candidates[0].content.parts).at(-1)).toEqual({ functionCall: { name: "get_order", args: { order_id: "A-1" } } });
    expect(chunks).toHaveLength(5);
    expect(chunks.at(-1)?.candidates[0].finishReason).toBe("STOP");
    const json = await gemini(model, ask);
    expect(json.headers.get("muscle-mem-cache")).toBe("hit");
    expect(((await json.json()) as GenerateContent).candidates[0].content.parts).toEqual([
      { text: "Let me look that order up." },
      { functionCall: { name: "get_order", args: { order_id: "A-1" } } },
    ]);
    expect(await geminiGenerations(model)).toBe(1);
  });

  it("Should branch on a changed function response", async () => {
    const model = uniqueModel();
    await (await gemini(model, afterLookup("delivered"))).arrayBuffer();
    await recordedGemini(model, afterLookup("delivered"));
    const shipped = await gemini(model, afterLookup("shipped"));
    expect(shipped.headers.get("muscle-mem-cache")).toBe("miss");
    expect(((await shipped.json()) as GenerateContent).candidates[0].content.parts[0].text).toContain("shipped");
    const delivered = await gemini(model, afterLookup("delivered"));
    expect(delivered.headers.get("muscle-mem-cache")).toBe("hit");
    expect(((await delivered.json()) as GenerateContent).candidates[0].content.parts[0].functionCall?.name).toBe("refund");
    expect(await geminiGenerations(model)).toBe(2);
  });

  it("Should tenant by key whether it comes as x-goog-api-key or ?key=, and isolate other keys", async () => {
    const model = uniqueModel();
    await (await gemini(model, ask, { key: "gm-owner" })).arrayBuffer();
    await recordedGemini(model, ask, { key: "gm-owner" });
    const byQuery = await gemini(model, ask, { key: "gm-owner", via: "query" });
    expect(byQuery.headers.get("muscle-mem-cache")).toBe("hit");
    await byQuery.arrayBuffer();
    const other = await gemini(model, ask, { key: "gm-other" });
    expect(other.headers.get("muscle-mem-cache")).toBe("miss");
    await other.arrayBuffer();
    const none = await gemini(model, ask, { key: null });
    expect(none.headers.get("muscle-mem-cache")).toBe("bypass");
    await none.arrayBuffer();
  });

  it("Should key systemInstruction, tools and generationConfig in the frame", async () => {
    const model = uniqueModel();
    await (await gemini(model, ask)).arrayBuffer();
    await recordedGemini(model, ask);
    for (const changed of [
      { ...ask, systemInstruction: { parts: [{ text: "Be brief." }] } },
      { ...ask, tools: [] },
      { ...ask, generationConfig: { temperature: 0 } },
    ]) {
      const res = await gemini(model, changed, { headers: { "cache-control": "only-if-cached" } });
      expect(res.status).toBe(504);
      await res.arrayBuffer();
    }
  });

  it("Should pass server-side tools, cachedContent and other /v1beta calls through", async () => {
    const model = uniqueModel();
    for (const extra of [{ tools: [{ googleSearch: {} }] }, { cachedContent: "cachedContents/abc" }]) {
      const res = await gemini(model, { ...ask, ...extra });
      expect(res.headers.get("muscle-mem-cache")).toBe("bypass");
      await res.arrayBuffer();
    }
    const other = await fetchWorker(`/v1beta/models/${model}:countTokens`);
    expect(other.status).toBe(404);
    expect(other.headers.get("muscle-mem-cache")).toBe("bypass");
    expect(await other.json()).toMatchObject({ error: { status: "NOT_FOUND" } });
  });
});

async function fetchWorker(path: string): Promise<Response> {
  const { exports } = await import("cloudflare:workers");
  return exports.default.fetch(
    new Request(`http://mm.test${path}`, { method: "POST", headers: { "x-goog-api-key": "gm-key-default", "content-type": "application/json" }, body: "{}" }),
  );
}
