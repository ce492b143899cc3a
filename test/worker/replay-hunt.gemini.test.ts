import { describe, expect, it } from "vitest";
import { chunkOf, gemini, sseChunks, type GeminiStubReply } from "./gemini.support";
import { uniqueModel } from "./helpers";
import { geminiMissAndHits } from "./gemini-replay.support";

/**
 * The answer side of a wrong replay, Gemini generateContent and streamGenerateContent: a hit's candidate must
 * be what the model sent (call ids aside), or the answer must not be recorded.
 */

const body = { contents: [{ role: "user", parts: [{ text: "Refund order A-1." }] }] };
const usage = { usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 4, totalTokenCount: 9 } };

type Candidate = { content?: { parts?: unknown[] }; index?: number; finishReason?: string; [k: string]: unknown };

/** The parts of a JSON response's first candidate, or of a stream's candidates joined in order. */
function partsOf(text: string, stream: boolean): unknown[] {
  const responses = stream ? sseChunks<{ candidates?: Candidate[] }>(text) : [JSON.parse(text) as { candidates?: Candidate[] }];
  return responses.flatMap((r) => r.candidates?.flatMap((c) => c.content?.parts ?? []) ?? []);
}

/** The miss's body, and a JSON and a streamed hit's (null when nothing was recorded). */
const missAndHits = (reply: GeminiStubReply, stream: boolean) =>
  geminiMissAndHits(body, reply, stream, uniqueModel("gem-hunt"), `gm-hunt-${crypto.randomUUID()}`);

describe("replay hunt: Gemini", () => {
  it("Should not record a stream that carries a second candidate on chunks of its own (was: served both as one)", async () => {
    const sse = [
      chunkOf([{ text: "Yes." }]),
      { candidates: [{ index: 1, content: { role: "model", parts: [{ text: " No." }] }, finishReason: "STOP" }] },
      chunkOf([], { finishReason: "STOP" }, usage),
    ];
    const out = await missAndHits({ sse }, true);
    expect(out.json).toBeNull();
  });

  it("Should not record a JSON answer whose one candidate is not candidate 0", async () => {
    const json = { candidates: [{ index: 1, content: { role: "model", parts: [{ text: "No." }] }, finishReason: "STOP" }], ...usage };
    const out = await missAndHits({ json }, false);
    expect(out.json).toBeNull();
  });

  it("Should serve adjacent text parts and parallel calls as sent, in order, call ids renewed", async () => {
    const parts = [
      { text: "Refunding" },
      { text: " now." },
      { functionCall: { id: "c1", name: "refund", args: { order: "A-1", qty: 1 } } },
      { functionCall: { id: "c2", name: "notify", args: {} } },
    ];
    const json = { candidates: [{ index: 0, content: { role: "model", parts }, finishReason: "STOP" }], ...usage };
    const out = await missAndHits({ json }, false);
    const plain = (ps: unknown[]) => ps.map((p) => JSON.parse(JSON.stringify(p).replace(/"id":"[^"]*"/, '"id":"x"')));
    expect(out.json && plain(partsOf(out.json, false))).toEqual(plain(parts));
  });

  it("Should not record text with a lone surrogate", async () => {
    const text = String.raw`a\ud800b\u2028c\u0000d`;
    const out = await missAndHits(
      { text: `{"candidates":[{"index":0,"content":{"role":"model","parts":[{"text":"${text}"}]},"finishReason":"STOP"}]}` },
      false,
    );
    expect([out.json, out.stream]).toEqual([null, null]);
  });

  it("Should not record function call arguments streamed in pieces (partialArgs, willContinue)", async () => {
    const sse = [
      chunkOf([{ functionCall: { name: "refund", partialArgs: [{ jsonPath: "$.order", stringValue: "A-" }], willContinue: true } }]),
      chunkOf([{ functionCall: { partialArgs: [{ jsonPath: "$.order", stringValue: "1" }], willContinue: false } }]),
      chunkOf([{ functionCall: { name: "refund", args: { order: "A-1" } } }], { finishReason: "STOP" }, usage),
    ];
    const out = await missAndHits({ sse }, true);
    expect([out.json, out.stream]).toEqual([null, null]);
  });
});
