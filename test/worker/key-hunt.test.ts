import { describe, expect, it } from "vitest";
import { api, importFor, ok, type Tree } from "./api-helpers";
import { chat, generations, recorded, uniqueModel } from "./helpers";
import { gemini, geminiGenerations, recordedGemini } from "./gemini.support";
import { onlyIfCached, served } from "./key-hunt.support";
import { messageRecorded, postMessages } from "./messages.support";
import { recordedResponse, responses } from "./responses.support";

/**
 * Wrong replays hunted in what is keyed: request A is recorded, then B, which differs from A only in one
 * thing the model reads, must not be served A's answer (only-if-cached: 504, or a bypass), and a plain B
 * reaches the model. Each case failed (B was a hit) before its fix.
 */

/** A structured-output schema whose properties come in `order`: the model writes its JSON in that order. */
const schemaIn = (order: string[]) => ({
  type: "object",
  properties: Object.fromEntries(order.map((name) => [name, { type: "string" }])),
  required: ["answer", "reasoning"],
  additionalProperties: false,
});
const answerFirst = schemaIn(["answer", "reasoning"]);
const reasoningFirst = schemaIn(["reasoning", "answer"]);

describe("key hunt: a structured output schema's property order is keyed (the model writes its JSON in that order)", () => {
  it("Should not serve a chat answer recorded for response_format properties in another order", async () => {
    const model = uniqueModel("echo");
    const init = { key: "sk-hunt-order-chat" };
    const body = (schema: unknown) => ({
      model,
      messages: [{ role: "user", content: "Is 17 prime?" }],
      response_format: { type: "json_schema", json_schema: { name: "verdict", strict: true, schema } },
    });
    await (await chat(body(answerFirst), init)).arrayBuffer();
    await recorded(body(answerFirst), init);
    expect(await served(await chat(body(reasoningFirst), { ...init, headers: onlyIfCached }))).toBe(false);
    // The same order spelled with other whitespace and other key order elsewhere is still the same request.
    const respelled = JSON.stringify(body(answerFirst), null, 2);
    expect(await served(await chat(respelled, { ...init, headers: onlyIfCached }))).toBe(true);
    const again = await chat(body(reasoningFirst), init);
    await again.arrayBuffer();
    expect(again.headers.get("muscle-mem-cache")).toBe("miss");
    expect(await generations(model)).toBe(2);
  });

  it("Should not serve a Responses answer recorded for text.format properties in another order", async () => {
    const model = uniqueModel("echo-resp");
    const init = { key: "sk-hunt-order-resp" };
    const body = (schema: unknown) => ({ model, input: "Is 17 prime?", text: { format: { type: "json_schema", name: "verdict", strict: true, schema } } });
    await (await responses(body(answerFirst), init)).arrayBuffer();
    await recordedResponse(body(answerFirst), init);
    expect(await served(await responses(body(reasoningFirst), { ...init, headers: onlyIfCached }))).toBe(false);
  });

  it("Should not serve a Messages answer recorded for output_format properties in another order", async () => {
    const init = { key: "sk-ant-hunt-order" };
    const model = uniqueModel("echo");
    const body = (schema: unknown) => ({
      model,
      max_tokens: 64,
      messages: [{ role: "user", content: "Is 17 prime?" }],
      output_format: { type: "json_schema", schema },
    });
    await (await postMessages(body(answerFirst), init)).arrayBuffer();
    await messageRecorded(body(answerFirst), init);
    expect(await served(await postMessages(body(reasoningFirst), { ...init, headers: onlyIfCached }))).toBe(false);
  });

  it("Should not serve a Gemini answer recorded for responseJsonSchema properties in another order", async () => {
    const model = uniqueModel("gm-echo");
    const init = { key: "gm-hunt-order" };
    const body = (schema: unknown) => ({
      contents: [{ role: "user", parts: [{ text: "Is 17 prime?" }] }],
      generationConfig: { responseMimeType: "application/json", responseJsonSchema: schema },
    });
    await (await gemini(model, body(answerFirst), init)).arrayBuffer();
    await recordedGemini(model, body(answerFirst), init);
    expect(await served(await gemini(model, body(reasoningFirst), { ...init, headers: onlyIfCached }))).toBe(false);
    expect(await geminiGenerations(model)).toBe(1);
  });
});

describe("key hunt: numbers keep their text where the upstream may show it to the model", () => {
  it("Should not serve a Responses answer recorded for an additional_tools schema whose number is written otherwise (10 vs 10.0)", async () => {
    const model = uniqueModel("echo-resp");
    const init = { key: "sk-hunt-numbers-resp" };
    const raw = (maximum: string) =>
      `{"model":"${model}","input":[{"role":"user","content":"how many?"},{"type":"additional_tools","tools":[{"type":"function","name":"count","parameters":{"type":"object","properties":{"n":{"type":"number","maximum":${maximum}}}}}]}]}`;
    await (await responses(raw("10"), init)).arrayBuffer();
    await recordedResponse(raw("10"), init);
    expect(await served(await responses(raw("10.0"), { ...init, headers: onlyIfCached }))).toBe(false);
  });

  it("Should not serve a chat answer recorded for a message field whose number is written otherwise (1 vs 1.0)", async () => {
    const model = uniqueModel("echo");
    const init = { key: "sk-hunt-numbers-chat" };
    const raw = (weight: string) => `{"model":"${model}","messages":[{"role":"user","content":"rank it","weight":${weight}}]}`;
    await (await chat(raw("1"), init)).arrayBuffer();
    await recorded(raw("1"), init);
    expect(await served(await chat(raw("1.0"), { ...init, headers: onlyIfCached }))).toBe(false);
    // The same text is the same request.
    expect(await served(await chat(raw("1"), { ...init, headers: onlyIfCached }))).toBe(true);
  });
});

describe("key hunt: a keyed schema order survives an export and an import", () => {
  it("Should seed another tenant from an export whose identical request hits, and whose other property order does not", async () => {
    const model = uniqueModel("echo");
    const [from, to] = [`sk-hunt-export-${crypto.randomUUID()}`, `sk-hunt-import-${crypto.randomUUID()}`];
    const body = (schema: unknown) => ({
      model,
      messages: [{ role: "user", content: "Is 91 prime?" }],
      response_format: { type: "json_schema", json_schema: { name: "verdict", strict: true, schema } },
    });
    await (await chat(body(reasoningFirst), { key: from })).arrayBuffer();
    await recorded(body(reasoningFirst), { key: from });
    const trees = await ok<{ data: Tree[] }>(api("/trees", { token: from }));
    expect(trees.data).toHaveLength(1);
    const lines = await (await api(`/trees/${trees.data[0].id}/export`, { token: from })).text();
    await ok(importFor(to, { body: lines, headers: { "content-type": "application/x-ndjson" } }));
    expect(await served(await chat(body(reasoningFirst), { key: to, headers: onlyIfCached }))).toBe(true);
    expect(await served(await chat(body(answerFirst), { key: to, headers: onlyIfCached }))).toBe(false);
    expect(await generations(model)).toBe(1);
  });
});

describe("key hunt: Gemini reads a field under its proto name too (snake_case)", () => {
  it("Should pass cached_content through as cachedContent is: the prompt lives upstream, not in the body", async () => {
    const model = uniqueModel("gm-echo");
    const body = { contents: [{ role: "user", parts: [{ text: "summarise the cached file" }] }], cached_content: "cachedContents/abc123" };
    for (let i = 0; i < 2; i++) {
      const res = await gemini(model, body, { key: "gm-hunt-snake" });
      await res.arrayBuffer();
      expect(res.headers.get("muscle-mem-cache")).toBe("bypass");
    }
    expect(await geminiGenerations(model)).toBe(2);
  });

  it("Should pass a part with file_data or inline_data through as fileData and inlineData are: what a URL holds can change", async () => {
    const model = uniqueModel("gm-echo");
    const parts = [
      { text: "what is in the picture?", file_data: { file_uri: "https://example.com/today.png", mime_type: "image/png" } },
      { text: "and here?", inline_data: { data: "aGk=", mime_type: "text/plain" } },
    ];
    for (const part of parts) {
      const res = await gemini(model, { contents: [{ role: "user", parts: [part] }] }, { key: "gm-hunt-snake-media" });
      await res.arrayBuffer();
      expect(res.headers.get("muscle-mem-cache")).toBe("bypass");
    }
  });
});

describe("key hunt: an answer the cache never records is never served in its place", () => {
  it("Should pass a Gemini request for image or audio output through (only its text answers could be recorded)", async () => {
    const model = uniqueModel("gm-echo");
    const configs = [{ responseModalities: ["TEXT", "IMAGE"] }, { responseModalities: ["AUDIO"] }, { speechConfig: { voiceConfig: {} } }];
    for (const generationConfig of configs) {
      const body = { contents: [{ role: "user", parts: [{ text: "draw me a cat" }] }], generationConfig };
      for (let i = 0; i < 2; i++) {
        const res = await gemini(model, body, { key: "gm-hunt-modalities" });
        await res.arrayBuffer();
        expect(res.headers.get("muscle-mem-cache"), JSON.stringify(generationConfig)).toBe("bypass");
      }
    }
    // A text-only request is cached as before.
    const text = { contents: [{ role: "user", parts: [{ text: "name a cat" }] }], generationConfig: { responseModalities: ["TEXT"] } };
    const res = await gemini(model, text, { key: "gm-hunt-modalities" });
    await res.arrayBuffer();
    expect(res.headers.get("muscle-mem-cache")).toBe("miss");
  });

  it("Should pass a chat request offering a custom (free-form) tool through: a call of it is never recorded", async () => {
    const model = uniqueModel("echo");
    const body = {
      model,
      messages: [{ role: "user", content: "run the query" }],
      tools: [{ type: "custom", custom: { name: "sql", description: "Runs SQL." } }],
    };
    for (let i = 0; i < 2; i++) {
      const res = await chat(body, { key: "sk-hunt-custom-tool" });
      await res.arrayBuffer();
      expect(res.headers.get("muscle-mem-cache")).toBe("bypass");
    }
    expect(await generations(model)).toBe(2);
  });
});
