import { describe, expect, it } from "vitest";
import { chunkOf, gemini, recordedGemini, sseChunks, withGeminiUpstream } from "./gemini.support";
import { uniqueModel } from "./helpers";
import { settled } from "./settled";

/**
 * Streams whose per-chunk metadata changes, as real ones do: `usageMetadata` grows on every chunk
 * (Gemini 2.x), `modelVersion`, `responseId` and Vertex's `createTime` repeat, Gemini 1.5 rates each
 * chunk (`safetyRatings` may change) and a citation comes on the chunk that cites. Such a stream is
 * recorded and a streamed hit sends each chunk's candidate metadata with it; only a change the JSON
 * form cannot hold is refused.
 */

const body = { contents: [{ role: "user", parts: [{ text: "Tell me about refunds." }] }] };
const rated = (harassment: string) => [
  { category: "HARM_CATEGORY_HARASSMENT", probability: harassment },
  { category: "HARM_CATEGORY_HATE_SPEECH", probability: "NEGLIGIBLE" },
];
const source = (uri: string, start: number) => ({ startIndex: start, endIndex: start + 10, uri });
const growing = (n: number) => ({
  usageMetadata: { promptTokenCount: 6, candidatesTokenCount: n, totalTokenCount: 6 + n },
  createTime: "2025-01-01T00:00:00Z",
});

type Chunk = { candidates?: Array<Record<string, unknown>>; usageMetadata?: unknown };

const events = (text: string): Chunk[] => sseChunks<Chunk>(text);

/** A chunk's candidate without what a hit renders afresh (index) or not at all. */
const candidateOf = (c: Chunk) => {
  const { index: _index, ...rest } = c.candidates?.[0] ?? {};
  return rest;
};

async function recordThenHit(model: string, chunks: unknown[]): Promise<{ miss: Chunk[]; hit: Chunk[]; json: Chunk; calls: number }> {
  const { result, calls } = await withGeminiUpstream({ sse: chunks }, async () => {
    const first = await gemini(model, body, { stream: true });
    expect(first.headers.get("muscle-mem-cache")).toBe("miss");
    const miss = events(await first.text());
    await recordedGemini(model, body);
    const streamed = await gemini(model, body, { stream: true });
    expect(streamed.headers.get("muscle-mem-cache")).toBe("hit");
    const hit = events(await streamed.text());
    const json = (await (await gemini(model, body)).json()) as Chunk;
    return { miss, hit, json };
  });
  return { ...result, calls: calls.length };
}

describe("Gemini streams whose metadata changes from chunk to chunk", () => {
  it("Should record a stream whose usageMetadata grows on every chunk and serve the last count", async () => {
    const model = uniqueModel("gem-usage");
    const chunks = [
      chunkOf([{ text: "Refunds take " }], {}, growing(3)),
      chunkOf([{ text: "five days." }], {}, growing(6)),
      chunkOf([{ text: "" }], { finishReason: "STOP" }, growing(6)),
    ];
    const { miss, hit, json, calls } = await recordThenHit(model, chunks);
    expect(calls).toBe(1);
    expect(hit.map(candidateOf)).toEqual(miss.map(candidateOf));
    expect(hit.at(-1)?.usageMetadata).toEqual({ promptTokenCount: 6, candidatesTokenCount: 6, totalTokenCount: 12 });
    expect(json.candidates?.[0].content).toEqual({ role: "model", parts: [{ text: "Refunds take five days." }] });
  });

  it("Should record a stream whose chunks are rated differently, serving each chunk's ratings streamed and the last as JSON", async () => {
    const model = uniqueModel("gem-rated");
    const chunks = [
      chunkOf([{ text: "Refunds take " }], { safetyRatings: rated("NEGLIGIBLE") }, growing(3)),
      chunkOf([{ text: "five days, you idiot." }], { safetyRatings: rated("LOW") }, growing(8)),
      chunkOf([{ text: " Sorry." }], { finishReason: "STOP", safetyRatings: rated("NEGLIGIBLE") }, growing(10)),
    ];
    const { miss, hit, json, calls } = await recordThenHit(model, chunks);
    expect(calls).toBe(1);
    expect(hit.map(candidateOf)).toEqual(miss.map(candidateOf));
    expect(hit.map((c) => c.candidates?.[0].safetyRatings)).toEqual([rated("NEGLIGIBLE"), rated("LOW"), rated("NEGLIGIBLE")]);
    expect(json.candidates?.[0].safetyRatings).toEqual(rated("NEGLIGIBLE"));
  });

  it("Should record citations that come on the chunks that cite, serving each with its chunk and all of them as JSON", async () => {
    const model = uniqueModel("gem-cited");
    const a = source("https://example.com/a", 0);
    const b = source("https://example.com/b", 20);
    const chunks = [
      chunkOf([{ text: "Refunds take five days " }], { citationMetadata: { citationSources: [a] } }),
      chunkOf([{ text: "after the return arrives." }], { citationMetadata: { citationSources: [b] } }),
      chunkOf([{ text: "" }], { finishReason: "STOP" }, growing(9)),
    ];
    const { miss, hit, json, calls } = await recordThenHit(model, chunks);
    expect(calls).toBe(1);
    expect(hit.map(candidateOf)).toEqual(miss.map(candidateOf));
    expect(json.candidates?.[0].citationMetadata).toEqual({ citationSources: [a, b] });
  });

  it("Should serve a finish reason on every chunk when the model sent one on every chunk (Gemini 1.5)", async () => {
    const model = uniqueModel("gem-finish");
    const chunks = [
      chunkOf([{ text: "Refunds take " }], { finishReason: "STOP" }, growing(3)),
      chunkOf([{ text: "five days." }], { finishReason: "STOP" }, growing(6)),
    ];
    const { miss, hit } = await recordThenHit(model, chunks);
    expect(hit.map(candidateOf)).toEqual(miss.map(candidateOf));
  });

  it("Should not record a stream whose citations change in a shape the JSON form cannot join", async () => {
    const model = uniqueModel("gem-odd-cite");
    const chunks = [
      chunkOf([{ text: "Refunds take five days " }], { citationMetadata: { citationSources: [source("https://example.com/a", 0)] } }),
      chunkOf([{ text: "after the return." }], { finishReason: "STOP", citationMetadata: { citations: [{ uri: "https://example.com/b" }] } }),
    ];
    const { calls } = await withGeminiUpstream({ sse: chunks }, async () => {
      // settled: the decision not to record has been made before the same request is sent again.
      await settled(async () => (await gemini(model, body, { stream: true })).arrayBuffer());
      const again = await gemini(model, body, { stream: true });
      expect(again.headers.get("muscle-mem-cache")).toBe("miss");
      await again.arrayBuffer();
    });
    expect(calls).toHaveLength(2);
  });

  it("Should keep serving a recording made before chunk layouts (one chunk per part)", async () => {
    const model = uniqueModel("gem-old");
    // A JSON recording has no layout: a streamed hit cuts it one part a chunk, as before.
    const { calls } = await withGeminiUpstream(
      {
        json: {
          candidates: [{ content: { role: "model", parts: [{ text: "A." }, { functionCall: { name: "f", args: {} } }] }, finishReason: "STOP", index: 0 }],
        },
      },
      async () => {
        await (await gemini(model, body)).arrayBuffer();
        await recordedGemini(model, body);
        const res = await gemini(model, body, { stream: true });
        expect(res.headers.get("muscle-mem-cache")).toBe("hit");
        expect(events(await res.text()).map((c) => c.candidates?.[0].content)).toEqual([
          { role: "model", parts: [{ text: "A." }] },
          { role: "model", parts: [{ functionCall: { name: "f", args: {} } }] },
        ]);
      },
    );
    expect(calls).toHaveLength(1);
  });
});
