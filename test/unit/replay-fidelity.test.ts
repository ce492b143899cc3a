import { describe, expect, it } from "vitest";
import { assembledOf, GeminiStreamReader, type GeminiChunk } from "../../src/providers/gemini/stream";
import { renderGenerateContent, renderGenerateContentStream, type GeminiAnswer } from "../../src/providers/gemini/render";
import { geminiAdapter } from "../../src/providers/gemini/adapter";
import { messagesAdapter } from "../../src/providers/anthropic/adapter";
import { storedOf } from "../support/stored-answer";

/**
 * Replay fidelity: an answer is recorded only when a hit can serve what the
 * model sent. Gemini's safety ratings, citations and finish message come back
 * on a hit as recorded; a field the render does not put back (grounding,
 * logprobs, URL context metadata, a token count; a prompt feedback) would be
 * dropped on every hit, so such an answer is not recorded.
 */

const text = { role: "model", parts: [{ text: "The refund is on its way." }] };
const plain = {
  candidates: [{ content: text, finishReason: "STOP", index: 0 }],
  usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 7 },
  modelVersion: "gemini-x",
  responseId: "r1",
};

/** The SSE bytes of `chunks`, as streamGenerateContent?alt=sse sends them. */
function sse(chunks: unknown[]): Uint8Array {
  return new TextEncoder().encode(chunks.map((c) => `data: ${JSON.stringify(c)}\r\n\r\n`).join(""));
}

function streamed(chunks: unknown[]) {
  const reader = new GeminiStreamReader();
  reader.feed(sse(chunks));
  return reader.result();
}

/** Candidate metadata a hit sends back as the model sent it. */
const replayedMetadata: Array<[string, unknown]> = [
  [
    "safetyRatings",
    [
      { category: "HARM_CATEGORY_HARASSMENT", probability: "NEGLIGIBLE" },
      { category: "HARM_CATEGORY_HATE_SPEECH", probability: "NEGLIGIBLE" },
    ],
  ],
  ["citationMetadata", { citationSources: [{ startIndex: 0, endIndex: 10, uri: "https://example.com" }] }],
  ["finishMessage", "Model stopped."],
];

/** Candidate metadata a hit could not send back (search results, per-token statistics): such an answer is not recorded. */
const droppedMetadata: Array<[string, unknown]> = [
  ["groundingMetadata", { webSearchQueries: ["refund policy"] }],
  ["logprobsResult", { topCandidates: [] }],
  ["urlContextMetadata", { urlMetadata: [] }],
  ["tokenCount", 7],
];

const geminiUrl = new URL("http://mm.test/v1beta/models/gemini-x:generateContent");
const geminiBody = geminiAdapter.schema.parse({ contents: [{ role: "user", parts: [{ text: "Refund order A-1." }] }] });
const geminiRequest = { body: geminiBody, raw: JSON.stringify(geminiBody), url: geminiUrl, headers: new Headers() };
const geminiKeyed = geminiAdapter.key(geminiRequest, { tenant: "t", namespace: "default", maxMessageBytes: 900_000 });
if (!geminiKeyed.ok) throw new Error(JSON.stringify(geminiKeyed));
const geminiKey = geminiKeyed.key;

/** The recording of a JSON answer or of a stream's chunks, as the answer a hit reads back. */
function storedGemini(answer: unknown | unknown[]): GeminiAnswer {
  const reader = geminiAdapter.reader(geminiKey, geminiRequest);
  let recording: ReturnType<typeof reader.fromJson>;
  if (Array.isArray(answer)) {
    const stream = reader.stream();
    stream.feed(sse(answer));
    recording = stream.finish(1);
  } else recording = reader.fromJson(JSON.stringify(answer), 1);
  const read = geminiAdapter.answerOf(storedOf(recording));
  if (!read) throw new Error("not servable");
  return read;
}

const ctx = { model: "gemini-x", responseId: "mm1" };
const servedChunks = (answer: GeminiAnswer) =>
  renderGenerateContentStream(answer, ctx)
    .split("\r\n\r\n")
    .filter((e) => e.startsWith("data: "))
    .map((e) => JSON.parse(e.slice(6)) as { candidates: Array<Record<string, unknown>> });

describe("replay fidelity: Gemini candidate metadata", () => {
  it("Should record a plain candidate (content, finish reason, index) and its avgLogprobs, a statistic like usage", () => {
    expect(assembledOf(plain as GeminiChunk)?.content).toEqual(text);
    expect(assembledOf({ ...plain, candidates: [{ ...plain.candidates[0], avgLogprobs: -0.12 }] } as GeminiChunk)?.content).toEqual(text);
    expect(streamed([plain])?.content).toEqual(text);
  });

  for (const [field, value] of replayedMetadata) {
    it(`Should serve a candidate's ${field} as the model sent it, recorded from JSON or from a stream, on a JSON and a streamed hit`, () => {
      const fromJson = storedGemini({ ...plain, candidates: [{ ...plain.candidates[0], [field]: value }] });
      const first = {
        candidates: [{ content: { role: "model", parts: [{ text: "The refund " }] }, index: 0, ...(field === "safetyRatings" ? { [field]: value } : {}) }],
      };
      const last = {
        ...plain,
        candidates: [{ content: { role: "model", parts: [{ text: "is on its way." }] }, finishReason: "STOP", index: 0, [field]: value }],
      };
      const fromStream = storedGemini([first, last]);
      for (const answer of [fromJson, fromStream]) {
        const served = renderGenerateContent(answer, ctx) as { candidates: Array<Record<string, unknown>> };
        expect(served.candidates[0][field]).toEqual(value);
        expect(served.candidates[0].content).toEqual(text);
        const chunks = servedChunks(answer);
        expect(chunks[chunks.length - 1].candidates[0][field]).toEqual(value);
      }
      // The same answer, but for how the stream was cut: a streamed hit sends the model's chunks.
      expect({ ...fromStream, layout: undefined }).toEqual(fromJson);
      expect(servedChunks(fromStream).map((c) => c.candidates[0].content)).toEqual([first, last].map((c) => c.candidates[0].content));
    });
  }

  it("Should stream safety ratings on every chunk, as Gemini does, and serve a stream whose chunks rate differently with each chunk's ratings", () => {
    const ratings = replayedMetadata[0][1];
    const call = { role: "model", parts: [{ text: "Looking it up." }, { functionCall: { name: "get_order", args: { id: "A-1" } } }] };
    const answer = storedGemini({ ...plain, candidates: [{ content: call, finishReason: "STOP", index: 0, safetyRatings: ratings }] });
    const chunks = servedChunks(answer);
    expect(chunks).toHaveLength(2);
    for (const chunk of chunks) expect(chunk.candidates[0].safetyRatings).toEqual(ratings);
    const low = [{ category: "HARM_CATEGORY_HARASSMENT", probability: "LOW" }];
    const first = { candidates: [{ content: { role: "model", parts: [{ text: "The refund " }] }, index: 0, safetyRatings: low }] };
    const last = {
      ...plain,
      candidates: [{ content: { role: "model", parts: [{ text: "is on its way." }] }, finishReason: "STOP", index: 0, safetyRatings: ratings }],
    };
    const differently = storedGemini([first, last]);
    expect(servedChunks(differently).map((c) => c.candidates[0].safetyRatings)).toEqual([low, ratings]);
    expect((renderGenerateContent(differently, ctx) as { candidates: Array<Record<string, unknown>> }).candidates[0].safetyRatings).toEqual(ratings);
  });

  it("Should key the answer node as before: candidate metadata is stored, never hashed", () => {
    const reader = geminiAdapter.reader(geminiKey, geminiRequest);
    const withRatings = reader.fromJson(JSON.stringify({ ...plain, candidates: [{ ...plain.candidates[0], safetyRatings: replayedMetadata[0][1] }] }), 1);
    expect(withRatings?.answer.hash).toBe(reader.fromJson(JSON.stringify(plain), 1)?.answer.hash);
  });

  it("Should serve an answer recorded without metadata exactly as before", () => {
    const served = renderGenerateContent(storedGemini(plain), ctx) as { candidates: Array<Record<string, unknown>> };
    expect(Object.keys(served.candidates[0])).toEqual(["content", "finishReason", "index"]);
    expect(servedChunks(storedGemini(plain))[0].candidates[0]).toEqual({ content: text, index: 0, finishReason: "STOP" });
  });

  for (const [field, value] of droppedMetadata) {
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
    const request = {
      body,
      raw: JSON.stringify(body),
      url: new URL("http://mm.test/v1/messages"),
      headers: new Headers({ "anthropic-version": "2023-06-01" }),
    };
    const keyed = messagesAdapter.key(request, { tenant: "t", namespace: "default", maxMessageBytes: 900_000 });
    if (!keyed.ok) throw new Error(JSON.stringify(keyed));
    return messagesAdapter.reader(keyed.key, request);
  };
  const message = {
    id: "msg_1",
    type: "message",
    role: "assistant",
    model: "claude-x",
    content: [{ type: "text", text: "Done." }],
    stop_reason: "end_turn",
    stop_sequence: null,
    usage: { input_tokens: 5, output_tokens: 2 },
  };
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
