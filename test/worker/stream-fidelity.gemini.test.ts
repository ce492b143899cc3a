import { describe, expect, it } from "vitest";
import { newKey } from "./api-helpers";
import { uniqueModel } from "./helpers";
import { events, scripted, send, type Scripted } from "./stream-fidelity.support";

const USAGE = '"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":4,"totalTokenCount":9}';
const chunk = (parts: string, finish?: string) =>
  `{"candidates":[{"content":{"parts":[${parts}],"role":"model"}${finish ? `,"finishReason":"${finish}"` : ""},"index":0}],${USAGE},"modelVersion":"gemini-3-pro"}`;
const json = (parts: string): Scripted => ({
  json: `{"candidates":[{"content":{"parts":[${parts}],"role":"model"},"finishReason":"STOP","index":0}],${USAGE},"modelVersion":"gemini-3-pro"}`,
});

const CALL = '{"functionCall":{"name":"get_order","args":{"order_id":"G-1"}},"thoughtSignature":"Z2VtLXNpZw=="}';
const CODE = '{"executableCode":{"language":"PYTHON","code":"print(6*7)"}}';
const RESULT = '{"codeExecutionResult":{"outcome":"OUTCOME_OK","output":"42\\n"}}';
const SIGNED_TEXT = '{"text":"Checking.","thoughtSignature":"dGV4dC1zaWc="}';
const UNKNOWN = '{"text":"done","x_future":{"kept":true}}';
const ALL = [SIGNED_TEXT, UNKNOWN, CALL];

type Part = Record<string, unknown>;
const partsOf = (text: string): Part[] => (JSON.parse(text) as { candidates: Array<{ content: { parts: Part[] } }> }).candidates[0].content.parts;
const streamedParts = (text: string): Part[] =>
  events(text).flatMap((e) => (e.candidates as Array<{ content?: { parts?: Part[] } }> | undefined)?.[0]?.content?.parts ?? []);
const path = (model: string, stream: boolean) => `/v1beta/models/${model}:${stream ? "streamGenerateContent?alt=sse" : "generateContent"}`;

describe("a streamed Gemini answer is recorded whole", () => {
  it("Should record signed calls and text and unknown part fields streamed, and serve them whole JSON and streamed", async () => {
    const headers = { "x-goog-api-key": newKey() };
    const model = uniqueModel("gm-whole");
    const body = { contents: [{ role: "user", parts: [{ text: "Run it, then look up G-1." }] }] };
    const { value, asked } = await scripted(
      () => ({ sse: [...ALL.slice(0, -1).map((p) => chunk(p)), chunk(CALL, "STOP")] }),
      async () => [await send(path(model, true), body, headers), await send(path(model, false), body, headers), await send(path(model, true), body, headers)],
    );
    expect(value.map((r) => r.cache)).toEqual(["miss", "hit", "hit"]);
    expect(asked).toBe(1);
    const expected = ALL.map((p) => JSON.parse(p) as Part);
    expect(partsOf(value[1].text)).toEqual(expected);
    expect(streamedParts(value[2].text)).toEqual(expected);
    // The SDK echoes the parts as served, then the call's response.
    const second = {
      contents: [
        ...body.contents,
        { role: "model", parts: partsOf(value[1].text) },
        { role: "user", parts: [{ functionResponse: { name: "get_order", response: { status: "shipped" } } }] },
      ],
    };
    const next = await scripted(
      () => ({ sse: [chunk('{"text":"Shipped."}', "STOP")] }),
      async () => [await send(path(model, true), second, headers), await send(path(model, false), second, headers)],
    );
    expect(next.value.map((r) => r.cache)).toEqual(["miss", "hit"]);
  });

  it("Should serve a JSON answer's parts whole on a streamed hit", async () => {
    const headers = { "x-goog-api-key": newKey() };
    const model = uniqueModel("gm-json");
    const body = { contents: [{ role: "user", parts: [{ text: "Run it, then look up G-1." }] }] };
    const { value } = await scripted(
      () => json(ALL.join(",")),
      async () => [await send(path(model, false), body, headers), await send(path(model, true), body, headers)],
    );
    expect(value.map((r) => r.cache)).toEqual(["miss", "hit"]);
    expect(streamedParts(value[1].text)).toEqual(ALL.map((p) => JSON.parse(p) as Part));
  });

  it("Should record code execution (executableCode, codeExecutionResult) neither streamed nor JSON: the model ran it, a replay would not", async () => {
    const headers = { "x-goog-api-key": newKey() };
    const model = uniqueModel("gm-code");
    const body = { contents: [{ role: "user", parts: [{ text: "What is 6*7?" }] }] };
    const { value, asked } = await scripted(
      (_, streamed) => (streamed ? { sse: [chunk(CODE), chunk(RESULT), chunk('{"text":"42"}', "STOP")] } : json(`${CODE},${RESULT},{"text":"42"}`)),
      async () => [await send(path(model, true), body, headers), await send(path(model, false), body, headers), await send(path(model, true), body, headers)],
    );
    expect(value.map((r) => r.cache)).toEqual(["miss", "miss", "miss"]);
    expect(asked).toBe(3);
  });

  it("Should not record a call streamed in pieces (Vertex's partialArgs, willContinue): a JSON hit would serve the pieces as calls", async () => {
    const headers = { "x-goog-api-key": newKey() };
    const model = uniqueModel("gm-pieces");
    const body = { contents: [{ role: "user", parts: [{ text: "Look up G-1." }] }] };
    const pieces = [
      chunk(
        '{"functionCall":{"name":"get_order","args":{},"partialArgs":[{"jsonPath":"$.order_id","stringValue":"G-","willContinue":true}],"willContinue":true}}',
      ),
      chunk('{"functionCall":{"name":"get_order","args":{},"partialArgs":[{"jsonPath":"$.order_id","stringValue":"1"}]}}', "STOP"),
    ];
    const { value, asked } = await scripted(
      () => ({ sse: pieces }),
      async () => [await send(path(model, true), body, headers), await send(path(model, true), body, headers)],
    );
    expect(value.map((r) => r.cache)).toEqual(["miss", "miss"]);
    expect(asked).toBe(2);
  });
});
