import { GoogleGenAI, type Candidate, type Content, type GenerateContentResponse, type Part } from "@google/genai/web";
import { describe, expect, it } from "vitest";
import { api, ok, type Tree, importFor } from "./api-helpers";
import { chunkOf, gemini, recordedGemini, withGeminiUpstream, type GeminiStubReply } from "./gemini.support";
import { uniqueModel } from "./helpers";

/**
 * Thought summaries (`generationConfig.thinkingConfig.includeThoughts`): the model's answer carries
 * `thought: true` text parts before its answer, a signature on one of them or on the answer. Such an
 * answer is recorded and served as the model sent it, through the official client, JSON and streamed;
 * the thought parts an agent sends back are keyed like any part (text, flag and signature).
 */

const SIG = "c2lnbmF0dXJlLVQ=";
const OTHER_SIG = "c2lnbmF0dXJlLVU=";
const config = { thinkingConfig: { includeThoughts: true } };
/** The model's usage: it counts its thoughts apart; a hit reports the recorded prompt and candidate counts only (docs/compat.md). */
const usage = { promptTokenCount: 9, candidatesTokenCount: 5, thoughtsTokenCount: 21, totalTokenCount: 35 };
const hitUsage = { promptTokenCount: 9, candidatesTokenCount: 5, totalTokenCount: 14 };

const firstAnswer: Part[] = [
  { text: "**Checking the order**\nThe user wants a refund.", thought: true },
  { text: "Order A-1 is delivered.", thoughtSignature: SIG },
];
const nextAnswer: Part[] = [{ text: "**Closing**\nThey said thanks.", thought: true, thoughtSignature: OTHER_SIG }, { text: "You're welcome." }];

/** The model's streamed chunks for the first turn: thought pieces, a signed empty thought, the answer. */
const firstChunks: Part[][] = [
  [{ text: "**Checking", thought: true }],
  [{ text: " the order**", thought: true }],
  [{ text: "", thought: true, thoughtSignature: SIG }],
  [{ text: "Order A-1 " }],
  [{ text: "is delivered." }],
];

const turns = (body: Record<string, unknown>) => (body.contents as unknown[]).length;

function jsonOf(parts: Part[]): GeminiStubReply {
  return {
    json: {
      candidates: [{ content: { role: "model", parts }, finishReason: "STOP", index: 0 }],
      usageMetadata: usage,
      modelVersion: "gemini-stub",
      responseId: "stub-1",
    },
  };
}

function streamOf(chunks: Part[][]): GeminiStubReply {
  return {
    sse: chunks.map((parts, i) =>
      i === chunks.length - 1
        ? chunkOf(parts, { finishReason: "STOP" }, { usageMetadata: usage })
        : chunkOf(parts, {}, { usageMetadata: { promptTokenCount: 9, totalTokenCount: 9 } }),
    ),
  };
}

const client = (key: string) => new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: "http://mm.test" } });
const cacheOf = (r: GenerateContentResponse) => r.sdkHttpResponse?.headers?.["muscle-mem-cache"] ?? null;

/** One streamed chat turn through the official client: each chunk's candidates, the history after it, and how the Worker answered. */
async function chatTurn(
  key: string,
  model: string,
  history: Content[],
  message: string,
): Promise<{ chunks: Candidate[][]; history: Content[]; cache: string | null }> {
  const chat = client(key).chats.create({ model, history, config });
  let cache: string | null = null;
  const chunks: Candidate[][] = [];
  for await (const chunk of await chat.sendMessageStream({ message })) {
    cache ??= cacheOf(chunk);
    chunks.push(chunk.candidates ?? []);
  }
  return { chunks, history: chat.getHistory(), cache };
}

/** Asks, only from the cache, for `contents` after `body`'s frame: the status (200 hit, 504 miss). */
async function cachedStatus(model: string, key: string, body: Record<string, unknown>, contents: unknown): Promise<number> {
  const res = await gemini(model, { ...body, contents }, { key, headers: { "cache-control": "only-if-cached" } });
  await res.arrayBuffer();
  return res.status;
}

/** `contents` (as JSON) with one change that must make another request. */
function variants(contents: unknown): string[] {
  const json = JSON.stringify(contents);
  const out = [
    json.replace("The user wants a refund.", "The user wants a return."),
    json.replace(',"thought":true', ""),
    json.replace(`"thoughtSignature":"${SIG}"`, `"thoughtSignature":"${OTHER_SIG}"`),
  ];
  for (const other of out) expect(other).not.toBe(json);
  return out;
}

describe("Gemini thought summaries, through @google/genai", () => {
  it("Should record a JSON answer with thought parts, serve it as the model sent it, and key the thoughts sent back", async () => {
    const model = uniqueModel("gem-thought");
    const key = `gm-th-${model}`;
    const { calls } = await withGeminiUpstream(
      (body) => jsonOf(turns(body) > 1 ? nextAnswer : firstAnswer),
      async (seen) => {
        const ask = { model, contents: "Refund order A-1.", config };
        const miss = await client(key).models.generateContent(ask);
        expect(cacheOf(miss)).toBe("miss");
        expect(miss.usageMetadata).toEqual(usage);
        await recordedGemini(model, seen[0], { key });
        const hit = await client(key).models.generateContent(ask);
        expect(cacheOf(hit)).toBe("hit");
        expect(hit.candidates).toEqual(miss.candidates);
        expect(hit.candidates?.[0].content?.parts).toEqual(firstAnswer);
        expect(hit.text).toBe(miss.text);
        expect(hit.usageMetadata).toEqual(hitUsage);

        // The next turn sends the thoughts back: recorded, then a hit; another thought, flag or signature misses.
        const history = [{ role: "user", parts: [{ text: "Refund order A-1." }] }, hit.candidates?.[0].content, { role: "user", parts: [{ text: "Thanks." }] }];
        const next = await client(key).models.generateContent({ model, contents: history as Content[], config });
        expect(cacheOf(next)).toBe("miss");
        expect(seen[1].contents).toEqual(history);
        await recordedGemini(model, seen[1], { key });
        const again = await client(key).models.generateContent({ model, contents: history as Content[], config });
        expect(cacheOf(again)).toBe("hit");
        expect(again.candidates?.[0].content?.parts).toEqual(nextAnswer);
        for (const other of variants(history)) expect(await cachedStatus(model, key, seen[1], JSON.parse(other))).toBe(504);
      },
    );
    expect(calls).toHaveLength(2);
  });

  it("Should record a streamed answer with thought parts and stream the chunks the model sent; the next turn continues on the recorded path", async () => {
    const model = uniqueModel("gem-thought-s");
    const key = `gm-th-${model}`;
    const { calls } = await withGeminiUpstream(
      (body) => (turns(body) > 1 ? streamOf([nextAnswer]) : streamOf(firstChunks)),
      async (seen) => {
        const miss = await chatTurn(key, model, [], "Refund order A-1.");
        expect(miss.cache).toBe("miss");
        expect(miss.chunks.flatMap((c) => c[0].content?.parts)).toEqual(firstChunks.flat());
        await recordedGemini(model, seen[0], { key });
        const hit = await chatTurn(key, model, [], "Refund order A-1.");
        expect(hit.cache).toBe("hit");
        expect(hit.chunks).toEqual(miss.chunks);
        expect(hit.history).toEqual(miss.history);
        // As JSON: each thought piece as streamed (never joined), the answer's plain text joined.
        const json = await gemini(model, seen[0], { key });
        expect(json.headers.get("muscle-mem-cache")).toBe("hit");
        const served = (await json.json()) as { candidates: Array<{ content: Content }>; usageMetadata: unknown };
        expect(served.candidates[0].content.parts).toEqual([...firstChunks.slice(0, 3).flat(), { text: "Order A-1 is delivered." }]);
        expect(served.usageMetadata).toEqual(hitUsage);

        const next = await chatTurn(key, model, miss.history, "Thanks.");
        expect(next.cache).toBe("miss");
        const contents = next.history.slice(0, -1);
        expect(seen[1].contents).toEqual(contents);
        await recordedGemini(model, seen[1], { key });
        const again = await chatTurn(key, model, hit.history, "Thanks.");
        expect(again.cache).toBe("hit");
        expect(again.chunks).toEqual(next.chunks);
        const changed = JSON.stringify(contents).replace('"**Checking"', '"**Reading"');
        expect(changed).not.toBe(JSON.stringify(contents));
        expect(await cachedStatus(model, key, seen[1], JSON.parse(changed))).toBe(504);
      },
    );
    expect(calls).toHaveLength(2);
  });

  it("Should export the thought parts as the model sent them and serve them from an import", async () => {
    const model = uniqueModel("gem-thought-x");
    const key = `gm-th-${model}`;
    const other = `gm-th2-${model}`;
    const body = { generationConfig: config, contents: [{ role: "user", parts: [{ text: "Refund order A-1." }] }] };
    const { calls } = await withGeminiUpstream(jsonOf(firstAnswer), async () => {
      await (await gemini(model, body, { key })).arrayBuffer();
      await recordedGemini(model, body, { key });
    });
    expect(calls).toHaveLength(1);
    const page = await ok<{ data: Tree[] }>(api("/trees", { token: key }));
    expect(page.data).toHaveLength(1);
    const jsonl = await (await api(`/trees/${page.data[0].id}/export`, { token: key })).text();
    const line = JSON.parse(jsonl.trim()) as { contents: Array<{ role: string; parts: unknown[] }> };
    expect(line.contents[1]).toEqual({ role: "model", parts: firstAnswer });
    expect(await ok(importFor(other, { body: jsonl, headers: { "content-type": "application/x-ndjson" } }))).toMatchObject({ trees: 1, answers: 1 });
    for (const stream of [false, true]) {
      const [mine, theirs] = await Promise.all(
        [key, other].map((k) => gemini(model, body, { key: k, stream, headers: { "cache-control": "only-if-cached" } })),
      );
      expect([mine.status, theirs.status]).toEqual([200, 200]);
      const strip = (t: string) => t.replace(/"responseId":"[^"]*"/g, "");
      expect(strip(await theirs.text())).toBe(strip(await mine.text()));
    }
  });
});
