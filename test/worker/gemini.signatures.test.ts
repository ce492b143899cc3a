import { GoogleGenAI, type Content, type Part } from "@google/genai/web";
import { describe, expect, it } from "vitest";
import { chunkOf, gemini, recordedGemini, withGeminiUpstream, type GeminiStubReply } from "./gemini.support";
import { uniqueModel } from "./helpers";

/**
 * Thought signatures (Gemini 2.5 / 3): the model puts `thoughtSignature` on a part (a function call, a
 * text, or an empty text at the end of a stream) and rejects the next request if the agent does not send
 * it back on that part. A hit must give the official client (`@google/genai`) the same history the miss
 * gave it, signatures where the model put them, streamed and as JSON; the echoed signature is keyed.
 */

const usage = { promptTokenCount: 9, candidatesTokenCount: 5, totalTokenCount: 14 };
const SIG_A = "c2lnbmF0dXJlLUE=";
const SIG_B = "c2lnbmF0dXJlLUI=";

/** The model's streams, by case: its chunks' parts, the last with STOP. */
const streams: Record<string, Part[][]> = {
  "a signature on an empty text part of its own, at the end": [[{ text: "The order" }], [{ text: " is delivered." }], [{ text: "", thoughtSignature: SIG_A }]],
  "a signature on the first text chunk, then unsigned text": [[{ text: "Hel", thoughtSignature: SIG_A }], [{ text: "lo, " }], [{ text: "A-1 is fine." }]],
  "a signature on the last text chunk": [[{ text: "Hel" }], [{ text: "lo, " }], [{ text: "A-1 is fine.", thoughtSignature: SIG_A }]],
  "a signature on a function call after text": [
    [{ text: "Let me look." }],
    [{ functionCall: { name: "get_order", args: { order_id: "A-1" } }, thoughtSignature: SIG_A }],
  ],
  "parallel function calls, the signature on the first only": [
    [
      { functionCall: { name: "get_order", args: { order_id: "A-1" } }, thoughtSignature: SIG_A },
      { functionCall: { name: "get_order", args: { order_id: "A-2" } } },
    ],
  ],
  "two signed text parts in a row": [[{ text: "One.", thoughtSignature: SIG_A }], [{ text: "Two.", thoughtSignature: SIG_B }], [{ text: "" }]],
};

function streamOf(chunks: Part[][]): GeminiStubReply {
  return {
    sse: chunks.map((parts, i) =>
      i === chunks.length - 1
        ? chunkOf(parts, { finishReason: "STOP" }, { usageMetadata: usage })
        : chunkOf(parts, {}, { usageMetadata: { promptTokenCount: 9, totalTokenCount: 9 } }),
    ),
  };
}

/** The upstream: the case's stream for the first turn, a plain answer after. */
function upstream(chunks: Part[][]) {
  return (body: Record<string, unknown>): GeminiStubReply => ((body.contents as unknown[]).length > 1 ? streamOf([[{ text: "Refunded." }]]) : streamOf(chunks));
}

const client = (key: string) => new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: "http://mm.test" } });

/** One streamed chat turn through the official client; the history it keeps after it, and how the Worker answered. */
async function chatTurn(key: string, model: string, history: Content[], message: string): Promise<{ history: Content[]; cache: string | null }> {
  const chat = client(key).chats.create({ model, history });
  let cache: string | null = null;
  const stream = await chat.sendMessageStream({ message });
  for await (const chunk of stream) cache ??= chunk.sdkHttpResponse?.headers?.["muscle-mem-cache"] ?? null;
  return { history: chat.getHistory(), cache };
}

/** The parts of a streamed answer joined as an app keeps them: consecutive unsigned text pieces into one part (an empty one, which carries nothing and is not keyed, left out). */
function joined(history: Content[]): Part[] {
  const parts: Part[] = [];
  for (const content of history.filter((c) => c.role === "model")) {
    for (const part of content.parts ?? []) {
      const last = parts[parts.length - 1];
      if (part.text !== undefined && Object.keys(part).length === 1 && last?.text !== undefined && Object.keys(last).length === 1) last.text += part.text;
      else parts.push({ ...part });
    }
  }
  return parts.filter((p) => !(p.text === "" && Object.keys(p).length === 1));
}

describe("Gemini thought signatures, through @google/genai", () => {
  for (const [name, chunks] of Object.entries(streams)) {
    it(`Should serve ${name} where the model put it, streamed and as JSON, and key the echoed signature`, async () => {
      const model = uniqueModel("gem-sig");
      const key = `gm-sig-${model}`;
      const { calls } = await withGeminiUpstream(upstream(chunks), async (seen) => {
        const miss = await chatTurn(key, model, [], "Refund order A-1.");
        expect(miss.cache).toBe("miss");
        await recordedGemini(model, seen[0], { key });
        const hit = await chatTurn(key, model, [], "Refund order A-1.");
        expect(hit.cache).toBe("hit");
        // The client keeps one model content per chunk: the hit streams the chunks the model streamed.
        expect(hit.history).toEqual(miss.history);
        // As JSON: the parts as an app joins the streamed miss's, each signature on its own part.
        const json = await gemini(model, seen[0], { key });
        expect(json.headers.get("muscle-mem-cache")).toBe("hit");
        expect(((await json.json()) as { candidates: Array<{ content: Content }> }).candidates[0].content.parts).toEqual(joined(miss.history));

        // The next turn: recorded after the miss's history, served after the hit's.
        const next = await chatTurn(key, model, miss.history, "Thanks.");
        expect(next.cache).toBe("miss");
        const contents = next.history.slice(0, -1);
        expect(seen[1].contents).toEqual(contents);
        await recordedGemini(model, seen[1], { key });
        expect((await chatTurn(key, model, hit.history, "Thanks.")).cache).toBe("hit");
        // The same turn with a signature changed or dropped is another request.
        const signed = JSON.stringify(contents);
        for (const other of [
          signed.replaceAll(SIG_A, SIG_B),
          signed.replaceAll(`,"thoughtSignature":"${SIG_A}"`, "").replaceAll(`"thoughtSignature":"${SIG_A}",`, ""),
        ]) {
          expect(other).not.toBe(signed);
          const res = await gemini(model, { ...seen[1], contents: JSON.parse(other) as unknown }, { key, headers: { "cache-control": "only-if-cached" } });
          expect(res.status).toBe(504);
          await res.arrayBuffer();
        }
      });
      expect(calls).toHaveLength(2);
    });
  }

  it("Should relay a stream with thought parts unchanged, then serve it as a hit (test/worker/gemini.thoughts.test.ts)", async () => {
    const model = uniqueModel("gem-thought");
    const key = `gm-sig-${model}`;
    const chunks: Part[][] = [
      [{ text: "Considering the order…", thought: true }],
      [{ text: "", thought: true, thoughtSignature: SIG_A }],
      [{ text: "It is delivered." }],
    ];
    const { calls } = await withGeminiUpstream(upstream(chunks), async () => {
      const body = { contents: [{ role: "user", parts: [{ text: "Refund order A-1." }] }] };
      const first = await gemini(model, body, { key, stream: true });
      expect(first.headers.get("muscle-mem-cache")).toBe("miss");
      const expected = (streamOf(chunks) as { sse: unknown[] }).sse.map((c) => `data: ${JSON.stringify(c)}`);
      expect((await first.text()).split("\r\n\r\n").filter(Boolean)).toEqual(expected);
      await recordedGemini(model, body, { key });
      const again = await gemini(model, body, { key, stream: true });
      expect(again.headers.get("muscle-mem-cache")).toBe("hit");
      await again.arrayBuffer();
    });
    expect(calls).toHaveLength(1);
  });
});
