import { describe, expect, it } from "vitest";
import { keyRequest } from "../../src/providers/chat/key";
import { chatRequest } from "../../src/core/messages";
import { renderChunkStream, renderCompletion } from "../../src/providers/chat/render";
import { chatAnswerReader } from "../../src/providers/chat/answer-reader";
import type { Recording } from "../../src/engine/generation";
import { storedOf } from "../support/stored-answer";
import { groq, openRouter, payloads, vllm } from "../worker/chat.providers.support";

/**
 * The fields OpenAI-compatible upstreams send around the message (src/core/envelope.ts): stored beside
 * the answer, never hashed; what a hit renews (ids, created, model, usage, system_fingerprint, OpenAI's
 * per-chunk `obfuscation` padding) is never stored; a stream with logprobs is not recorded.
 */

const messages = [{ role: "user", content: "Refund order A-1." }];
const keyed = keyRequest(chatRequest.parse({ model: "m", messages }), "t", "default");
if (!keyed.ok) throw new Error(JSON.stringify(keyed));
const reader = () => chatAnswerReader(keyed.key, 100);

function streamed(sse: string[]): Recording {
  const stream = reader().stream();
  stream.feed(new TextEncoder().encode(sse.map((d) => `data: ${d}\n\n`).join("")));
  return stream.finish(1);
}

const fromJson = (json: unknown) => reader().fromJson(JSON.stringify(json), 1);
const ctx = { id: "chatcmpl-mm1", model: "m", created: 2 };
const plain = {
  id: "x",
  object: "chat.completion",
  created: 1,
  model: "m",
  choices: [{ index: 0, message: { role: "assistant", content: "Refunded." }, logprobs: null, finish_reason: "stop" }],
  usage: { prompt_tokens: 9, completion_tokens: 3 },
};

/** A stream of "Refunded." whose every chunk carries `top` and whose choices carry `choice`. */
function chunks(top: Record<string, unknown>, choice: Record<string, unknown> = {}): string[] {
  const deltas = [{ role: "assistant", content: "" }, { content: "Refunded." }, {}];
  return [
    ...deltas.map((delta, i) =>
      JSON.stringify({
        id: "x",
        object: "chat.completion.chunk",
        created: 1,
        model: "m",
        ...top,
        choices: [{ index: 0, delta, logprobs: null, finish_reason: i === 2 ? "stop" : null, ...choice }],
      }),
    ),
    "[DONE]",
  ];
}

describe("chat answers of OpenAI-compatible upstreams: what is stored", () => {
  it("Should key the answer node as before: the fields around the message are stored, never hashed", () => {
    const hash = fromJson(plain)?.answer.hash;
    for (const shape of [vllm, openRouter, groq]) {
      const withFields = fromJson({
        ...shape.json,
        choices: [{ ...(shape.json.choices as object[])[0], message: { role: "assistant", content: "Refunded." } }],
      });
      expect(withFields?.answer.hash).toBe(hash);
      expect(JSON.parse(withFields!.answer.json)).not.toEqual({ role: "assistant", content: "Refunded." });
    }
    expect(streamed(groq.sse)?.answer.hash).toBe(hash);
  });

  it("Should store nothing of what a hit renews: ids, created, model, usage, system_fingerprint, obfuscation", () => {
    expect(JSON.parse(fromJson({ ...plain, system_fingerprint: "fp_1" })!.answer.json)).toEqual({ role: "assistant", content: "Refunded." });
    const padded = streamed(chunks({ system_fingerprint: "fp_1", obfuscation: "abc" }).map((c, i) => c.replace('"abc"', `"pad${i}"`)));
    expect(JSON.parse(padded!.answer.json)).toEqual({ role: "assistant", content: "Refunded." });
  });

  it("Should serve logprobs a JSON answer carried as recorded, and not record a stream that carries logprobs", () => {
    const logprobs = { content: [{ token: "Refunded", logprob: -0.1, bytes: null, top_logprobs: [] }], refusal: null };
    const answer = storedOf(fromJson({ ...plain, choices: [{ ...plain.choices[0], logprobs }] }));
    expect((renderCompletion(answer, ctx).choices as Array<Record<string, unknown>>)[0].logprobs).toEqual(logprobs);
    expect(streamed(chunks({}, { logprobs }))).toBeNull();
    expect(streamed(chunks({}))).not.toBeNull();
  });

  it("Should serve an answer recorded before (no muscle-mem:once) with its response fields on every chunk, as before", () => {
    const answer = storedOf(fromJson({ ...plain, service_tier: "default" }));
    expect(answer.message).not.toHaveProperty("muscle-mem:once");
    const served = payloads(renderChunkStream(answer, ctx, true));
    expect(served.map((c) => c.service_tier)).toEqual(served.map(() => "default"));
  });

  it("Should record a response field a stream changed with its last value, sent once (an OpenAI client keeps the last)", () => {
    const first = chunks({ provider: "A" });
    const changed = first.map((c, i) => (i === 0 ? c : c.replace('"provider":"A"', '"provider":"B"')));
    const answer = storedOf(streamed(changed));
    expect(answer.message["muscle-mem:once"]).toEqual(["provider"]);
    expect(renderCompletion(answer, ctx).provider).toBe("B");
    expect(payloads(renderChunkStream(answer, ctx, false)).filter((c) => "provider" in c)).toHaveLength(1);
  });
});
