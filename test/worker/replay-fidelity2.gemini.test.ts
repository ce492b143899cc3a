import { describe, expect, it } from "vitest";
import { api, importFor, ok, type Tree } from "./api-helpers";
import { chunkOf, gemini, sseChunks, type GeminiStubReply } from "./gemini.support";
import { uniqueModel } from "./helpers";
import { geminiMissAndHits } from "./gemini-replay.support";

/**
 * Answer fidelity, Gemini: a hit's candidate content is what the model sent (call ids renewed), down to a
 * call without `args` and an empty text part, which a client's parse would tell apart from `args: {}` and
 * from no part.
 */

const body = { contents: [{ role: "user", parts: [{ text: "Ping the service." }] }] };
const usage = { usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 4, totalTokenCount: 9 } };

type Response = { candidates?: Array<{ content?: { parts?: unknown[] } }> };

/** Each response's (chunk's) candidate-0 parts, call ids masked: what a client reads of the answer. */
function partsOf(text: string, stream: boolean): unknown[][] {
  const responses = stream ? sseChunks<Response>(text) : [JSON.parse(text) as Response];
  return responses.map((r) => JSON.parse(JSON.stringify(r.candidates?.[0]?.content?.parts ?? []).replace(/"id":"[^"]*"/g, '"id":"x"')) as unknown[]);
}

/** The miss's body, and a JSON and a streamed hit's (null when nothing was recorded). */
const missAndHits = (reply: GeminiStubReply, stream: boolean, model = uniqueModel("gem-fid2"), key = `gm-fid2-${crypto.randomUUID()}`) =>
  geminiMissAndHits(body, reply, stream, model, key);

const candidate = (parts: unknown[]) => ({ candidates: [{ index: 0, content: { role: "model", parts }, finishReason: "STOP" }], ...usage });

describe("replay fidelity 2: Gemini", () => {
  it("Should serve a call the model sent without args without them, JSON and streamed (was: args: {})", async () => {
    const parts = [{ functionCall: { name: "ping" } }, { functionCall: { id: "c2", name: "status", args: {} } }];
    const out = await missAndHits({ json: candidate(parts) }, false);
    expect(out.json && partsOf(out.json, false)).toStrictEqual(partsOf(out.miss, false));
    expect(out.stream && partsOf(out.stream, true).flat()).toStrictEqual(partsOf(out.miss, false).flat());
  });

  it("Should serve a streamed call without args in the chunk the model sent it", async () => {
    const sse = [chunkOf([{ text: "Pinging." }]), chunkOf([{ functionCall: { name: "ping" } }], { finishReason: "STOP" }, usage)];
    const out = await missAndHits({ sse }, true);
    expect(out.stream && partsOf(out.stream, true)).toStrictEqual(partsOf(out.miss, true));
    expect(out.json && partsOf(out.json, false).flat()).toStrictEqual(partsOf(out.miss, true).flat());
  });

  it("Should serve an empty text part of a JSON answer (was: left out)", async () => {
    const out = await missAndHits({ json: candidate([{ functionCall: { name: "ping", args: { host: "a" } } }, { text: "" }]) }, false);
    expect(out.json && partsOf(out.json, false)).toStrictEqual(partsOf(out.miss, false));
  });

  it("Should serve a streamed empty text part after a call where the model sent it", async () => {
    const sse = [chunkOf([{ functionCall: { name: "ping", args: {} } }]), chunkOf([{ text: "" }], { finishReason: "STOP" }, usage)];
    const out = await missAndHits({ sse }, true);
    expect(out.stream && partsOf(out.stream, true)).toStrictEqual(partsOf(out.miss, true));
  });

  it("Should serve a call without args as sent after an export and an import (was: args: {})", async () => {
    const model = uniqueModel("gem-fid2");
    const key = `gm-fid2-${crypto.randomUUID()}`;
    const out = await missAndHits({ json: candidate([{ functionCall: { name: "ping" } }]) }, false, model, key);
    const page = await ok<{ data: Tree[] }>(api("/trees", { token: key }));
    const jsonl = await (await api(`/trees/${page.data[0].id}/export`, { token: key })).text();
    const other = `gm-fid2-${crypto.randomUUID()}`;
    await ok(importFor(other, { body: jsonl, headers: { "content-type": "application/x-ndjson" } }));
    const res = await gemini(model, body, { key: other, headers: { "cache-control": "only-if-cached" } });
    expect(partsOf(await res.text(), false)).toStrictEqual(partsOf(out.miss, false));
  });

  it("Should still not record an answer that is only an empty text part", async () => {
    const out = await missAndHits({ json: candidate([{ text: "" }]) }, false);
    expect([out.json, out.stream]).toEqual([null, null]);
  });
});
