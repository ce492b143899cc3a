import { describe, expect, it } from "vitest";
import { keyRequest } from "../../src/providers/chat/key";
import { chatRequest } from "../../src/core/messages";
import { renderChunkStream, renderCompletion } from "../../src/providers/chat/render";
import { chatAnswerReader } from "../../src/providers/chat/answer-reader";
import type { Recording } from "../../src/engine/generation";
import { storedOf } from "../support/stored-answer";
import { azure, filters, message, promptFilters } from "../support/azure-answer";

/**
 * Replay fidelity on Azure OpenAI: the choice's `content_filter_results` and the response's
 * `prompt_filter_results` come back on a hit as the model sent them (JSON: on the choice and at the
 * top level; streamed: where Azure puts them), or the answer is not recorded.
 */

const messages = [{ role: "user", content: "Refund order A-1." }];
const keyed = keyRequest(chatRequest.parse({ model: "gpt-4o", messages }), "t", "default");
if (!keyed.ok) throw new Error(JSON.stringify(keyed));
const key = keyed.key;
const reader = () => chatAnswerReader(key, 100);

const ctx = { id: "chatcmpl-mm1", model: "gpt-4o", created: 2 };

/** The `data:` payloads of an SSE text, parsed ([DONE] left out). */
function payloads(sse: string): Array<Record<string, unknown>> {
  return sse
    .split("\n\n")
    .filter((e) => e.startsWith("data: ") && e !== "data: [DONE]")
    .map((e) => JSON.parse(e.slice(6)) as Record<string, unknown>);
}

/** Azure's chunk stream of `message`: prompt filters first (empty choices), then role, content and finish chunks. */
function azureStream(contentFilters: unknown[], extraChoice: Record<string, unknown> = {}): string {
  const base = { created: 1, id: "chatcmpl-A", model: "gpt-4o-2024-08-06", object: "chat.completion.chunk", system_fingerprint: "fp_1" };
  const choice = (delta: Record<string, unknown>, cfr: unknown, finish: string | null = null) => ({
    ...base,
    choices: [{ content_filter_results: cfr, delta, finish_reason: finish, index: 0, logprobs: null, ...extraChoice }],
  });
  const chunks: unknown[] = [
    { choices: [], created: 0, id: "", model: "", object: "", prompt_filter_results: promptFilters },
    choice({ content: "", refusal: null, role: "assistant" }, {}),
    ...contentFilters.map((cfr, i) => choice({ content: contentFilters.length === 1 ? "Refunded." : i === 0 ? "Refunded" : "." }, cfr)),
    choice({}, {}, "stop"),
  ];
  return `${chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join("")}data: [DONE]\n\n`;
}

function streamed(sse: string): Recording {
  const stream = reader().stream();
  stream.feed(new TextEncoder().encode(sse));
  return stream.finish(1);
}

describe("replay fidelity: Azure content filter results on chat completions", () => {
  it("Should serve a JSON answer's content_filter_results on the choice and prompt_filter_results at the top level, the message unchanged", () => {
    const served = renderCompletion(storedOf(reader().fromJson(JSON.stringify(azure), 1)), ctx) as {
      choices: Array<Record<string, unknown>>;
      prompt_filter_results?: unknown;
    };
    expect(served.choices[0].content_filter_results).toEqual(filters);
    expect(served.prompt_filter_results).toEqual(promptFilters);
    expect(served.choices[0].message).toEqual(message);
  });

  it("Should stream a JSON answer's filter results where Azure puts them: prompt filters in a first chunk with no choices, content filters on the content chunk", () => {
    const chunks = payloads(renderChunkStream(storedOf(reader().fromJson(JSON.stringify(azure), 1)), ctx, false));
    expect(chunks[0]).toMatchObject({ choices: [], prompt_filter_results: promptFilters });
    const choices = chunks.slice(1).map((c) => (c.choices as Array<Record<string, unknown>>)[0]);
    expect(choices.every((c) => "content_filter_results" in c)).toBe(true);
    const carrying = choices.filter((c) => Object.keys(c.content_filter_results as object).length > 0);
    expect(carrying).toHaveLength(1);
    expect(carrying[0]).toMatchObject({ content_filter_results: filters, delta: { content: "Refunded." } });
  });

  it("Should record Azure's stream (prompt filters in the first chunk, one content annotation) and serve both, JSON or streamed again", () => {
    const answer = storedOf(streamed(azureStream([filters])));
    const served = renderCompletion(answer, ctx) as { choices: Array<Record<string, unknown>>; prompt_filter_results?: unknown };
    expect(served.choices[0].content_filter_results).toEqual(filters);
    expect(served.prompt_filter_results).toEqual(promptFilters);
    expect(served.choices[0].message).toEqual(message);
    // A streamed hit assembles back into the same recorded message.
    const again = streamed(renderChunkStream(answer, ctx, false));
    expect(again?.answer.json).toBe(streamed(azureStream([filters]))?.answer.json);
  });

  it("Should serve the same recorded message from a JSON and from a streamed recording of one answer", () => {
    expect(streamed(azureStream([filters]))?.answer.json).toBe(reader().fromJson(JSON.stringify(azure), 1)?.answer.json);
  });

  it("Should record a stream whose content carries several annotations, or an asynchronous filter's offsets, without them (a hit could not send them back where they were)", () => {
    const hateLow = { ...filters, hate: { filtered: false, severity: "low" } };
    const plain = streamed(azureStream([{}]));
    for (const stream of [
      azureStream([filters, hateLow]),
      azureStream([filters], { content_filter_offsets: { check_offset: 0, start_offset: 0, end_offset: 9 } }),
    ]) {
      const recorded = streamed(stream);
      expect(recorded).not.toBeNull();
      const message = JSON.parse(recorded!.answer.json) as Record<string, unknown>;
      expect(message["muscle-mem:choice"]).toBeUndefined();
      // The prompt's filter results, sent once, are still kept; the message is the one the model streamed.
      expect(message["muscle-mem:response"]).toEqual({ prompt_filter_results: promptFilters });
      expect(recorded!.answer.hash).toBe(plain!.answer.hash);
    }
  });

  it("Should key the answer node as before: the filter results are not part of the message's hash, and an exported message with them walks the same path", () => {
    const withFilters = reader().fromJson(JSON.stringify(azure), 1);
    const plain = reader().fromJson(
      JSON.stringify({ ...azure, prompt_filter_results: undefined, choices: [{ ...azure.choices[0], content_filter_results: undefined }] }),
      1,
    );
    expect(withFilters?.answer.hash).toBe(plain?.answer.hash);
    const exported = JSON.parse(withFilters!.answer.json) as Record<string, unknown>;
    const history = (m: Record<string, unknown>) =>
      keyRequest(chatRequest.parse({ model: "gpt-4o", messages: [...messages, m, { role: "user", content: "Thanks." }] }), "t", "default");
    const a = history(exported);
    const b = history(message);
    if (!a.ok || !b.ok) throw new Error("not keyed");
    expect(a.key.key).toBe(b.key.key);
    expect(a.key.path[1].hash).toBe(withFilters?.answer.hash);
  });

  it("Should serve an answer recorded without filter results exactly as before (no content_filter_results, no prompt_filter_results, no extra chunk)", () => {
    const answer = storedOf(
      reader().fromJson(
        JSON.stringify({ ...azure, prompt_filter_results: undefined, choices: [{ finish_reason: "stop", index: 0, logprobs: null, message }] }),
        1,
      ),
    );
    expect(answer.message).toEqual(message);
    const served = renderCompletion(answer, ctx);
    expect(Object.keys(served)).toEqual(["id", "object", "created", "model", "choices", "usage", "system_fingerprint"]);
    expect(Object.keys((served.choices as object[])[0])).toEqual(["index", "message", "logprobs", "finish_reason"]);
    const sse = renderChunkStream(answer, ctx, true);
    expect(sse).not.toContain("filter_results");
    expect(payloads(sse)[0]).toMatchObject({ choices: [{ delta: { role: "assistant", content: "" } }] });
  });
});

describe("replay fidelity: the chat response's service_tier", () => {
  const openai = {
    ...azure,
    prompt_filter_results: undefined,
    choices: [{ finish_reason: "stop", index: 0, logprobs: null, message }],
    service_tier: "default",
  };
  /** OpenAI's chunk stream of `message`, `service_tier` on every chunk (`tiers[i]` on chunk i). */
  const openaiStream = (tiers: string[]) => {
    const deltas = [{ role: "assistant", content: "", refusal: null }, { content: "Refunded." }, {}];
    const chunks = deltas.map((delta, i) => ({
      id: "chatcmpl-B",
      object: "chat.completion.chunk",
      created: 1,
      model: "gpt-4o",
      service_tier: tiers[i],
      system_fingerprint: "fp_1",
      choices: [{ index: 0, delta, logprobs: null, finish_reason: i === 2 ? "stop" : null }],
    }));
    return `${chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join("")}data: [DONE]\n\n`;
  };

  it("Should serve a JSON answer's service_tier at the top level and on every chunk of a streamed hit", () => {
    const answer = storedOf(reader().fromJson(JSON.stringify(openai), 1));
    expect(renderCompletion(answer, ctx).service_tier).toBe("default");
    const chunks = payloads(renderChunkStream(answer, ctx, true));
    expect(chunks.map((c) => c.service_tier)).toEqual(chunks.map(() => "default"));
  });

  it("Should record a stream's service_tier (the same on every chunk), and not a stream whose chunks name different tiers", () => {
    const answer = storedOf(streamed(openaiStream(["default", "default", "default"])));
    expect(renderCompletion(answer, ctx).service_tier).toBe("default");
    expect(answer.message).toEqual(storedOf(reader().fromJson(JSON.stringify(openai), 1)).message);
    expect(streamed(openaiStream(["default", "flex", "default"]))).toBeNull();
  });
});
