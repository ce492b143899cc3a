import { describe, expect, it } from "vitest";
import { assembledOf, GeminiStreamReader, type GeminiChunk } from "../../src/cache/gemini/stream";
import { messagesAdapter } from "../../src/routes/messages/adapter";

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

describe("replay fidelity: Anthropic message fields", () => {
  const body = messagesAdapter.schema.parse({ model: "claude-x", max_tokens: 16, messages: [{ role: "user", content: "Refund order A-1." }] });
  const reader = () => {
    const request = { body, raw: JSON.stringify(body), url: new URL("http://mm.test/v1/messages"), headers: new Headers({ "anthropic-version": "2023-06-01" }) };
    const keyed = messagesAdapter.key(request, { tenant: "t", namespace: "default", maxMessageBytes: 900_000 });
    if (!keyed.ok) throw new Error(JSON.stringify(keyed));
    return messagesAdapter.reader(keyed.key, request);
  };
  const message = { id: "msg_1", type: "message", role: "assistant", model: "claude-x", content: [{ type: "text", text: "Done." }], stop_reason: "end_turn", stop_sequence: null, usage: { input_tokens: 5, output_tokens: 2 } };
  const events = (start: Record<string, unknown>, delta: Record<string, unknown>) =>
    [
      { type: "message_start", message: { ...message, content: [], stop_reason: null, ...start } },
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Done." } },
      { type: "content_block_stop", index: 0 },
      { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null, ...delta }, usage: { output_tokens: 2 } },
      { type: "message_stop" },
    ]
      .map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`)
      .join("");
  const streamed = (start: Record<string, unknown>, delta: Record<string, unknown> = {}) => {
    const stream = reader().stream();
    stream.feed(new TextEncoder().encode(events(start, delta)));
    return stream.finish(1);
  };
  const container = { id: "container_1", expires_at: "2026-01-01T00:00:00Z" };

  it("Should record a plain message, JSON or streamed", () => {
    expect(reader().fromJson(JSON.stringify(message), 1)).not.toBeNull();
    expect(streamed({})).not.toBeNull();
  });

  it("Should not record a message with a top-level field a hit does not send (container, context_management), JSON or streamed", () => {
    expect(reader().fromJson(JSON.stringify({ ...message, container }), 1)).toBeNull();
    expect(reader().fromJson(JSON.stringify({ ...message, context_management: { applied_edits: [] } }), 1)).toBeNull();
    expect(streamed({ container })).toBeNull();
    expect(streamed({}, { container })).toBeNull();
  });
});
