import { describe, expect, it } from "vitest";
import { keyGeminiRequest } from "../../src/providers/gemini/key";
import type { GenerateContentRequest } from "../../src/providers/gemini/schema";
import type { ProviderKey } from "../../src/cache/provider";
import { keyResponsesRequest } from "../../src/providers/responses/key";
import type { ResponsesRequest } from "../../src/providers/responses/schema";
import type { ExportNode } from "../../src/providers/trajectory/formats";
import { providerOfApi } from "../../src/providers";

const trajectoryFormatOf = (api: string) => providerOfApi(api)?.format;

const scope = { tenant: "t1", namespace: "default", maxMessageBytes: 900_000 };

/** A keyed request's path as the export reads it: every node a path node (nothing recorded). */
function pathOf(key: ProviderKey): ExportNode[] {
  return key.path.map((step) => ({ role: step.role, message: step.json, observations: 0, promptTokens: 0, completionTokens: 0, finishReason: null }));
}

/** Exports a keyed request's path and imports the line back: the import must land on the very same tree and nodes. */
function roundTrip(api: string, key: ProviderKey) {
  const format = trajectoryFormatOf(api);
  if (!format?.exportFields) throw new Error(`no format for ${api}`);
  const frame = JSON.parse(key.frameJson) as Record<string, unknown>;
  const line: Record<string, unknown> = { model: key.model, ...format.exportFields(frame, pathOf(key)) };
  const keyed = format.keyLine(JSON.parse(JSON.stringify(line)), scope);
  if ("error" in keyed) throw new Error(keyed.error);
  return { line, keyed };
}

describe("Responses trajectory lines", () => {
  const body = {
    model: "gpt-x",
    instructions: "Be brief.",
    tools: [{ type: "function", name: "get_order", parameters: { type: "object" } }],
    temperature: 0.2,
    store: false,
    input: [
      { role: "developer", content: "Use tools." },
      {
        role: "user",
        content: [
          { type: "input_text", text: "Refund #A-1" },
          { type: "input_text", text: "now" },
        ],
      },
      {
        id: "msg_1",
        type: "message",
        role: "assistant",
        status: "completed",
        content: [
          { type: "output_text", text: "Looking.", annotations: [] },
          { type: "refusal", refusal: "Not that." },
        ],
      },
      { id: "fc_1", type: "function_call", call_id: "call_zz", name: "get_order", arguments: '{ "order_id" : "A-1" }', status: "completed" },
      { type: "function_call", call_id: "call_yy", name: "get_order", arguments: "{}" },
      { type: "function_call_output", call_id: "call_yy", output: [{ type: "input_text", text: "missing" }] },
      { type: "function_call_output", call_id: "call_zz", output: '{"status":"delivered"}' },
      { role: "user", content: "" },
    ],
  } as unknown as ResponsesRequest;

  it("Should key an exported line on the same tree and path as POST /v1/responses keys the request", () => {
    const keyed = keyResponsesRequest(body, scope);
    if (!keyed.ok) throw new Error(JSON.stringify(keyed));
    const { line, keyed: imported } = roundTrip("openai-responses", keyed.key);
    expect(imported.treeId).toBe(keyed.key.treeId);
    expect(imported.frameJson).toBe(keyed.key.frameJson);
    expect(imported.nodes.map((n) => [n.h, n.m])).toEqual(keyed.key.path.map((s) => [s.hash, s.json]));
    expect((line as { input: unknown[] }).input).toHaveLength(8);
    // Both assistant items (the message and the two calls) are one scripted node, named by its first item.
    expect((line as { scripted_assistant_idx: number[] }).scripted_assistant_idx).toEqual([2]);
    expect(imported.answers).toBe(0);
  });

  it("Should take a Responses line's answer by any item of its run, and its recorded usage", () => {
    const keyed = keyResponsesRequest(body, scope);
    if (!keyed.ok) throw new Error(JSON.stringify(keyed));
    const format = trajectoryFormatOf("openai-responses");
    const line = {
      model: "gpt-x",
      ...format?.exportFields?.(JSON.parse(keyed.key.frameJson) as Record<string, unknown>, pathOf(keyed.key)),
      scripted_assistant_idx: [],
      answer_usage: [{ index: 4, prompt_tokens: 11, completion_tokens: 7, finish_reason: "completed" }],
    };
    const imported = format?.keyLine(line, scope);
    if (!imported || "error" in imported) throw new Error("not keyed");
    const answer = imported.nodes[2];
    expect(answer).toMatchObject({ o: 1, pt: 11, ct: 7, f: "completed", r: "assistant" });
  });
});

describe("Gemini trajectory lines", () => {
  const body = {
    systemInstruction: { parts: [{ text: "Refund desk." }] },
    tools: [{ functionDeclarations: [{ name: "get_order" }] }],
    generationConfig: { temperature: 0, maxOutputTokens: 64 },
    contents: [
      { role: "user", parts: [{ text: "Refund #A-1" }] },
      {
        role: "model",
        parts: [{ text: "Looking." }, { functionCall: { name: "get_order", id: "abc", args: { z: 1, a: [1.5, "x"] } }, thoughtSignature: "sig" }],
      },
      { role: "user", parts: [{ functionResponse: { name: "get_order", id: "abc", response: { status: "lost" } } }] },
      { parts: [{ text: "and now?" }] },
    ],
  } as unknown as GenerateContentRequest;

  it("Should key an exported line on the same tree and path as generateContent keys the request", () => {
    const keyed = keyGeminiRequest(body, "gemini-x", scope);
    if (!keyed.ok) throw new Error(JSON.stringify(keyed));
    const { line, keyed: imported } = roundTrip("gemini", keyed.key);
    expect(imported.treeId).toBe(keyed.key.treeId);
    expect(imported.nodes.map((n) => [n.h, n.m, n.r])).toEqual(keyed.key.path.map((s) => [s.hash, s.json, s.role]));
    const contents = (line as { contents: Array<{ parts: unknown[] }> }).contents;
    // The call's arguments come back as a value in the model's key order, its id as an ordinal.
    expect(contents[1].parts[1]).toEqual({ functionCall: { name: "get_order", id: "call_0", args: { z: 1, a: [1.5, "x"] } }, thoughtSignature: "sig" });
    expect(JSON.stringify(contents[1].parts[1])).toContain('{"z":1,"a":[1.5,"x"]}');
    expect((line as { params: unknown }).params).toEqual({
      "muscle-mem:api": "gemini",
      systemInstruction: body.systemInstruction,
      generationConfig: body.generationConfig,
    });
  });

  it("Should store an imported model answer with the role a recorded answer has", () => {
    const format = trajectoryFormatOf("gemini");
    const line = {
      model: "gemini-x",
      params: { "muscle-mem:api": "gemini" },
      contents: [
        { role: "user", parts: [{ text: "hi" }] },
        { role: "model", parts: [{ text: "hello" }] },
        { role: "user", parts: [{ text: "bye" }] },
        { role: "model", parts: [{ text: "ciao" }] },
      ],
      scripted_assistant_idx: [1],
    };
    const imported = format?.keyLine(line, scope);
    if (!imported || "error" in imported) throw new Error("not keyed");
    expect(imported.nodes.map((n) => [n.r, n.o, n.f])).toEqual([
      ["user", 0, null],
      ["model", 0, null],
      ["user", 0, null],
      ["assistant", 1, "STOP"],
    ]);
  });
});
