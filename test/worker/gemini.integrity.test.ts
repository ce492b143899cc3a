import { describe, expect, it } from "vitest";
import { chunkOf, gemini, recordedGemini, sseChunks, withGeminiUpstream, type GeminiStubReply } from "./gemini.support";
import { uniqueModel } from "./helpers";

/**
 * Nothing incomplete is recorded from a Gemini stream: cut before its finish reason, an error mid-stream,
 * a finish that is not a complete answer (SAFETY, RECITATION, MALFORMED_FUNCTION_CALL, …), a blocked
 * prompt, a client that goes away. The client still gets what the model sent, and single-flight
 * followers of such a leader go to the model themselves.
 */

const body = { contents: [{ role: "user", parts: [{ text: "Refund order A-1." }] }] };
const usage = { usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 4, totalTokenCount: 9 } };
const good = [
  chunkOf([{ text: "Refunding " }]),
  chunkOf([{ text: "A-1 now." }]),
  chunkOf([{ functionCall: { name: "refund", args: { id: "A-1" } }, thoughtSignature: "c2ln" }], { finishReason: "STOP" }, usage),
];
const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Sends `reply` as the answer to one streamed (or JSON) request, then checks the same request is not served from the tree. */
async function notRecorded(reply: GeminiStubReply, stream = true): Promise<string> {
  const model = uniqueModel("gem-cut");
  let text = "";
  const { calls } = await withGeminiUpstream(reply, async () => {
    const first = await gemini(model, body, { stream });
    expect(first.headers.get("muscle-mem-cache")).toBe("miss");
    text = await first.text().catch((error: unknown) => `cut: ${String(error)}`);
    await wait(300);
    const again = await gemini(model, body, { headers: { "cache-control": "only-if-cached" } });
    expect(again.status).toBe(504);
    await again.arrayBuffer();
  });
  expect(calls).toHaveLength(1);
  return text;
}

describe("Gemini stream integrity", () => {
  it("Should not record a stream cut before its finish reason, cleanly or by a broken connection", async () => {
    const relayed = await notRecorded({ sse: good.slice(0, 2) });
    expect(relayed).toContain("A-1 now.");
    await notRecorded({ sse: good.slice(0, 2), cut: true });
  });

  it("Should not record a stream broken after its last chunk, or with an error object mid-stream or after the finish", async () => {
    await notRecorded({ sse: good, cut: true });
    const error = { error: { code: 500, message: "Internal error encountered.", status: "INTERNAL" } };
    expect(await notRecorded({ sse: [...good.slice(0, 2), error] })).toContain("Internal error encountered.");
    await notRecorded({ sse: [...good, error] });
    await notRecorded({ sse: [good[0], "{not json", good[2]] });
  });

  for (const finishReason of ["SAFETY", "RECITATION", "MALFORMED_FUNCTION_CALL", "BLOCKLIST", "PROHIBITED_CONTENT", "OTHER", "UNEXPECTED_TOOL_CALL"]) {
    it(`Should relay but not record an answer that finished with ${finishReason}, streamed or JSON`, async () => {
      const last = chunkOf([{ text: "" }], { finishReason, finishMessage: "Stopped." }, usage);
      expect(await notRecorded({ sse: [good[0], last] })).toContain(finishReason);
      const json = { candidates: [{ content: { role: "model", parts: [{ text: "Refunding " }] }, finishReason, index: 0 }], ...usage };
      expect(await notRecorded({ json }, false)).toContain(finishReason);
    });
  }

  it("Should record an answer cut by MAX_TOKENS (the frame keys maxOutputTokens), and not one with no content", async () => {
    const model = uniqueModel("gem-max");
    await withGeminiUpstream({ sse: [good[0], chunkOf([{ text: "A-1" }], { finishReason: "MAX_TOKENS" }, usage)] }, async () => {
      await (await gemini(model, body, { stream: true })).arrayBuffer();
      await recordedGemini(model, body);
    });
    // A thinking model that spent every token thinking: MAX_TOKENS and a content without parts.
    await notRecorded({ sse: [chunkOf(null, { finishReason: "MAX_TOKENS" }, usage)] });
    await notRecorded({ json: { candidates: [{ content: { role: "model" }, finishReason: "MAX_TOKENS", index: 0 }], ...usage } }, false);
  });

  it("Should relay a blocked prompt (promptFeedback.blockReason) and record nothing, streamed or JSON", async () => {
    const blocked = { promptFeedback: { blockReason: "PROHIBITED_CONTENT" }, ...usage, modelVersion: "gemini-stub", responseId: "r" };
    expect(await notRecorded({ sse: [blocked] })).toContain("PROHIBITED_CONTENT");
    expect(await notRecorded({ json: blocked }, false)).toContain("PROHIBITED_CONTENT");
  });

  it("Should record nothing when the client goes away mid-stream", async () => {
    const model = uniqueModel("gem-abort");
    const { calls } = await withGeminiUpstream({ sse: good, cut: false }, async () => {
      const first = await gemini(model, body, { stream: true });
      const reader = first.body!.getReader();
      await reader.read();
      await reader.cancel("client gone");
      await wait(300);
      // The whole answer may have been read before the cancel: if anything was recorded, it is the whole stream.
      const again = await gemini(model, body, { stream: true, headers: { "cache-control": "only-if-cached" } });
      if (again.status === 200) expect(await again.text()).toContain('"finishReason":"STOP"');
      else expect(again.status).toBe(504);
    });
    expect(calls).toHaveLength(1);
  });
});

describe("Gemini single flight around an incomplete stream", () => {
  /** Three identical streamed requests at once; the first upstream call answers `leader` after 300 ms, later ones `good`. */
  async function concurrently(leader: GeminiStubReply) {
    const model = uniqueModel("slow-gem");
    let n = 0;
    const { result, calls } = await withGeminiUpstream(
      () => (n++ === 0 ? { ...leader, delayMs: 300 } : { sse: good }),
      async () => {
        // Each body read as it comes: the leader's stream settles the flight only once it is read.
        return Promise.all(
          [0, 1, 2].map(async () => {
            const r = await gemini(model, body, { stream: true });
            return { cache: r.headers.get("muscle-mem-cache"), role: r.headers.get("muscle-mem-single-flight"), text: await r.text().catch(() => "cut") };
          }),
        );
      },
    );
    return { result, calls: calls.length };
  }

  const leaders: Array<[string, GeminiStubReply]> = [
    ["cut before its finish", { sse: good.slice(0, 2), cut: true }],
    ["finished by SAFETY", { sse: [good[0], chunkOf([], { finishReason: "SAFETY" })] }],
    ["an error mid-stream", { sse: [good[0], { error: { code: 503, message: "overloaded", status: "UNAVAILABLE" } }] }],
  ];
  for (const [name, leader] of leaders) {
    it(`Should send the followers of a leader whose stream is ${name} to the model, each getting a whole answer`, async () => {
      const { result, calls } = await concurrently(leader);
      // Both followers joined the flight, then went to the model when it ended with nothing to serve.
      expect(calls).toBe(3);
      const whole = result.filter((r) => r.text.includes('"finishReason":"STOP"'));
      // The leader relays what the model sent it; every other request got the good answer whole.
      expect(whole).toHaveLength(2);
      for (const r of whole) expect(r.text).toContain('"thoughtSignature":"c2ln"');
    });
  }

  it("Should serve the followers of a complete leader its chunks, streamed, and its parts as JSON", async () => {
    const model = uniqueModel("slow-gem");
    const { result, calls } = await withGeminiUpstream({ sse: good, delayMs: 1000 }, async () => {
      const read = async (stream: boolean) => {
        const r = await gemini(model, body, { stream });
        return { cache: r.headers.get("muscle-mem-cache"), text: await r.text() };
      };
      return Promise.all([read(true), read(true), read(false)]);
    });
    expect(result.map((r) => r.cache).sort()).toEqual(["hit", "hit", "miss"]);
    expect(calls).toHaveLength(1);
    const leader = result.findIndex((r) => r.cache === "miss");
    const streamed = result[leader === 0 ? 1 : 0];
    const parts = (text: string) => sseChunks<{ candidates: Array<{ content: unknown }> }>(text).map((c) => c.candidates[0].content);
    expect(parts(streamed.text)).toEqual(good.map((c) => (c.candidates as Array<{ content: unknown }>)[0].content));
    expect((JSON.parse(result[2].text) as { candidates: Array<{ content: unknown }> }).candidates[0].content).toEqual({
      role: "model",
      parts: [{ text: "Refunding A-1 now." }, { functionCall: { name: "refund", args: { id: "A-1" } }, thoughtSignature: "c2ln" }],
    });
  });
});
