import { describe, expect, it } from "vitest";
import type { StoredAnswer } from "../../src/core/answer";
import { LAYOUT_KEY, plannedChunks, WHOLE } from "../../src/providers/gemini/layout";
import { geminiAnswerOf, renderGenerateContent, renderGenerateContentStream } from "../../src/providers/gemini/render";
import { CANDIDATE_KEY } from "../../src/providers/gemini/schema";

/**
 * A streamed recording's layout (src/providers/gemini/layout.ts) is read from the store, and an import can
 * write any: a layout that does not cover the recorded parts exactly is ignored (one chunk per part),
 * and neither it nor the candidate metadata can put anything but the recorded metadata on a candidate.
 */

const parts = [{ text: "Hello, world." }, { text: "", thoughtSignature: "c2ln" }, { functionCall: { name: "f", args: {} }, thoughtSignature: "c2ln" }];

describe("Gemini stream layouts", () => {
  it("Should cut the parts as the layout says: text pieces, empty pieces, whole parts, chunks without content or candidate", () => {
    const layout = [{ p: [0, 5] }, { p: [8, WHOLE], m: { safetyRatings: [] } }, { p: null, c: 0 }, { p: [WHOLE], f: "STOP" }];
    expect(plannedChunks(layout, parts, "STOP")).toEqual([
      { parts: [{ text: "" }, { text: "Hello" }], candidate: true, finishReason: undefined, metadata: {} },
      { parts: [{ text: ", world." }, parts[1]], candidate: true, finishReason: undefined, metadata: { safetyRatings: [] } },
      { parts: null, candidate: false, finishReason: undefined, metadata: { safetyRatings: [] } },
      { parts: [parts[2]], candidate: true, finishReason: "STOP", metadata: { safetyRatings: [] } },
    ]);
  });

  it("Should refuse a layout that does not cover the parts exactly, or is not one", () => {
    for (const layout of [
      "chunks",
      [],
      [{ p: [13] }, { p: [WHOLE] }],
      [{ p: [14, WHOLE, WHOLE] }],
      [{ p: [5, WHOLE] }, { p: [8, WHOLE] }],
      [{ p: [13, WHOLE, WHOLE, WHOLE] }],
      [{ p: [13, 0, 0, WHOLE, WHOLE] }, { p: [-2] }],
      [{ p: [13, WHOLE, WHOLE], m: { content: { parts: [{ text: "other" }] } } }],
      [{ p: [13, WHOLE, WHOLE], c: 0 }],
    ]) {
      // Each finishes as the answer does (its last chunk names STOP), so only its cut is at fault (finish reasons: test/worker/gemini.layout-finish-reason.test.ts).
      const finished = Array.isArray(layout) && layout.length > 0 ? [...layout.slice(0, -1), { ...layout[layout.length - 1], f: "STOP" }] : layout;
      expect(plannedChunks(finished, parts, "STOP")).toBeNull();
    }
  });

  it("Should serve a stored answer with a broken layout one part a chunk, and never put an imported field on the candidate", () => {
    const message = {
      role: "model",
      parts: [{ text: "Paid." }],
      [CANDIDATE_KEY]: {
        finishMessage: "done",
        content: { role: "model", parts: [{ text: "Refused." }] },
        finishReason: "SAFETY",
        [LAYOUT_KEY]: [{ p: [99], f: "STOP" }],
      },
    };
    const stored: StoredAnswer = {
      hash: "h".repeat(32),
      message: message as unknown as StoredAnswer["message"],
      observations: 1,
      finishReason: "STOP",
      promptTokens: 1,
      completionTokens: 1,
      latencyMs: 1,
    };
    const answer = geminiAnswerOf(stored);
    if (!answer) throw new Error("not renderable");
    const ctx = { model: "gemini-x", responseId: "r" };
    expect((renderGenerateContent(answer, ctx) as { candidates: unknown[] }).candidates[0]).toEqual({
      content: { role: "model", parts: [{ text: "Paid." }] },
      finishReason: "STOP",
      finishMessage: "done",
      index: 0,
    });
    const chunks = renderGenerateContentStream(answer, ctx).split("\r\n\r\n").filter(Boolean);
    expect(chunks).toHaveLength(1);
    expect(JSON.parse(chunks[0].slice(6))).toMatchObject({ candidates: [{ content: { parts: [{ text: "Paid." }] }, finishReason: "STOP" }] });
  });
});
