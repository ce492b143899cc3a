import { describe, expect, it } from "vitest";
import { chunkOf, gemini, recordedGemini, sseChunks, withGeminiUpstream, type GeminiStubReply } from "./gemini.support";
import { eventually, uniqueModel } from "./helpers";
import { followersWaiting, settled } from "./settled";

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

/** One request read the way a client reads it: its cache outcome, single-flight role and body. */
interface Read {
  cache: string | null;
  role: string | null;
  text: string;
}

/**
 * A leader and two followers, in that order by construction: the leader's upstream call is held at a gate,
 * the followers start only once it reached the upstream (the leader holds the flight), and the gate opens only
 * once both wait on the flight. `replies(n)` answers the n-th upstream call (the leader's is the first).
 */
async function leaderThenFollowers(replies: (n: number) => GeminiStubReply, followers: Array<{ stream: boolean }>) {
  const model = uniqueModel("gem-flight");
  let open = () => undefined as void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  let n = 0;
  const read = async (stream: boolean): Promise<Read> => {
    const r = await gemini(model, body, { stream });
    return { cache: r.headers.get("muscle-mem-cache"), role: r.headers.get("muscle-mem-single-flight"), text: await r.text().catch(() => "cut") };
  };
  const waitingBefore = await followersWaiting();
  const { result, calls } = await withGeminiUpstream(
    () => (n++ === 0 ? { ...replies(0), gate } : replies(n - 1)),
    async (calls) => {
      const leader = read(true);
      await eventually(() => calls.length === 1);
      const rest = followers.map((f) => read(f.stream));
      await eventually(async () => (await followersWaiting()) === waitingBefore + followers.length);
      open();
      return { leader: await leader, followers: await Promise.all(rest) };
    },
  );
  return { ...result, calls: calls.length };
}

/** Sends `reply` as the answer to one streamed (or JSON) request, then checks the same request is not served from the tree. */
async function notRecorded(reply: GeminiStubReply, stream = true): Promise<string> {
  const model = uniqueModel("gem-cut");
  let text = "";
  const { calls } = await withGeminiUpstream(reply, async () => {
    // Settled: the miss and whatever it left behind (a recording, or none) have finished.
    await settled(async () => {
      const first = await gemini(model, body, { stream });
      expect(first.headers.get("muscle-mem-cache")).toBe("miss");
      text = await first.text().catch((error: unknown) => `cut: ${String(error)}`);
    });
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

  it("Should not record an answer whose call args hold a key with a quote (workerd's JSON.parse can misread it), streamed or JSON", async () => {
    // Primes the misread: after an object with the keys "a" then backslash, {"a":1,"\"":2} parses with the key backslash.
    const primer = chunkOf([{ functionCall: { name: "set", args: { a: 1, "\\": 2 } } }], { finishReason: "STOP" }, usage);
    const quoted = chunkOf([{ functionCall: { name: "set", args: { a: 1, '"': 2 } } }], { finishReason: "STOP" }, usage);
    JSON.parse(JSON.stringify(primer));
    expect(await notRecorded({ sse: [quoted] })).toContain('{"a":1,"\\"":2}');
    expect(await notRecorded({ json: quoted }, false)).toContain('{"a":1,"\\"":2}');
  });

  it("Should record an answer whose args hold a backslash key or a number past 2^53 (Gemini writes doubles)", async () => {
    const model = uniqueModel("gem-args");
    const args = '{"a":1,"\\\\":2,"n":12345678901234567890}';
    const text = `{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"set","args":${args}}}]},"finishReason":"STOP","index":0}]}`;
    await withGeminiUpstream({ text, contentType: "application/json" }, async () => {
      await (await gemini(model, body)).arrayBuffer();
      await recordedGemini(model, body);
    });
  });

  it("Should record nothing when the client goes away mid-stream", async () => {
    const model = uniqueModel("gem-abort");
    const { calls } = await withGeminiUpstream({ sse: good, cut: false }, async () => {
      await settled(async () => {
        const first = await gemini(model, body, { stream: true });
        const reader = first.body!.getReader();
        await reader.read();
        await reader.cancel("client gone");
      });
      // The whole answer may have been read before the cancel: if anything was recorded, it is the whole stream.
      const again = await gemini(model, body, { stream: true, headers: { "cache-control": "only-if-cached" } });
      if (again.status === 200) expect(await again.text()).toContain('"finishReason":"STOP"');
      else expect(again.status).toBe(504);
    });
    expect(calls).toHaveLength(1);
  });
});

describe("Gemini single flight around an incomplete stream", () => {
  /** A leader answered `leader` and two streamed followers that joined its flight; later upstream calls answer `good`. */
  async function concurrently(leader: GeminiStubReply) {
    const { leader: first, followers, calls } = await leaderThenFollowers((n) => (n === 0 ? leader : { sse: good }), [{ stream: true }, { stream: true }]);
    return { result: [first, ...followers], calls };
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
    const { leader, followers, calls } = await leaderThenFollowers(() => ({ sse: good }), [{ stream: true }, { stream: false }]);
    expect([leader.cache, ...followers.map((f) => f.cache)]).toEqual(["miss", "hit", "hit"]);
    expect(followers.map((f) => f.role)).toEqual(["follower", "follower"]);
    expect(calls).toBe(1);
    const parts = (text: string) => sseChunks<{ candidates: Array<{ content: unknown }> }>(text).map((c) => c.candidates[0].content);
    expect(parts(followers[0].text)).toEqual(good.map((c) => (c.candidates as Array<{ content: unknown }>)[0].content));
    expect((JSON.parse(followers[1].text) as { candidates: Array<{ content: unknown }> }).candidates[0].content).toEqual({
      role: "model",
      parts: [{ text: "Refunding A-1 now." }, { functionCall: { name: "refund", args: { id: "A-1" } }, thoughtSignature: "c2ln" }],
    });
  });
});
