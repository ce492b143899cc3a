import { describe, expect, it } from "vitest";
import { assembledOf, GeminiStreamReader, type GeminiChunk } from "../../src/cache/gemini/stream";

/**
 * Replay fidelity: an answer is recorded only when a hit can serve what the
 * model sent. A field the render does not put back (Gemini candidate metadata:
 * citations, grounding, safety ratings, a finish message, logprobs; a prompt
 * feedback) would be dropped on every hit, so such an answer is not recorded.
 */

const text = { role: "model", parts: [{ text: "The refund is on its way." }] };
const plain = { candidates: [{ content: text, finishReason: "STOP", index: 0 }], usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 7 }, modelVersion: "gemini-x", responseId: "r1" };

/** The SSE bytes of `chunks`, as streamGenerateContent?alt=sse sends them. */
function sse(chunks: unknown[]): Uint8Array {
  return new TextEncoder().encode(chunks.map((c) => `data: ${JSON.stringify(c)}\r\n\r\n`).join(""));
}

function streamed(chunks: unknown[]) {
  const reader = new GeminiStreamReader();
  reader.feed(sse(chunks));
  return reader.result();
}

const candidateMetadata: Array<[string, unknown]> = [
  ["citationMetadata", { citationSources: [{ startIndex: 0, endIndex: 10, uri: "https://example.com" }] }],
  ["groundingMetadata", { webSearchQueries: ["refund policy"] }],
  ["safetyRatings", [{ category: "HARM_CATEGORY_HARASSMENT", probability: "MEDIUM" }]],
  ["finishMessage", "Model stopped."],
  ["logprobsResult", { topCandidates: [] }],
  ["urlContextMetadata", { urlMetadata: [] }],
  ["tokenCount", 7],
];

describe("replay fidelity: Gemini candidate metadata", () => {
  it("Should record a plain candidate (content, finish reason, index) and its avgLogprobs, a statistic like usage", () => {
    expect(assembledOf(plain as GeminiChunk)?.content).toEqual(text);
    expect(assembledOf({ ...plain, candidates: [{ ...plain.candidates[0], avgLogprobs: -0.12 }] } as GeminiChunk)?.content).toEqual(text);
    expect(streamed([plain])?.content).toEqual(text);
  });

  for (const [field, value] of candidateMetadata) {
    it(`Should not record an answer whose candidate carries ${field} (a hit would drop it), JSON or streamed`, () => {
      const candidate = { ...plain.candidates[0], [field]: value };
      expect(assembledOf({ ...plain, candidates: [candidate] } as GeminiChunk)).toBeNull();
      const first = { candidates: [{ content: { role: "model", parts: [{ text: "The refund " }] }, index: 0, [field]: value }] };
      const last = { ...plain, candidates: [{ content: { role: "model", parts: [{ text: "is on its way." }] }, finishReason: "STOP", index: 0 }] };
      expect(streamed([first, last])).toBeNull();
    });
  }

  it("Should not record an answer with a prompt feedback (safety ratings of the prompt) or another response field a hit does not send", () => {
    const feedback = { safetyRatings: [{ category: "HARM_CATEGORY_HARASSMENT", probability: "NEGLIGIBLE" }] };
    expect(assembledOf({ ...plain, promptFeedback: feedback } as GeminiChunk)).toBeNull();
    expect(streamed([{ ...plain, promptFeedback: feedback }])).toBeNull();
    expect(assembledOf({ ...plain, automaticFunctionCallingHistory: [] } as GeminiChunk)).toBeNull();
  });
});
