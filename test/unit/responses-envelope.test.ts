import { describe, expect, it } from "vitest";
import type { StoredAnswer } from "../../src/core/answer";
import { responseEnvelopeOf } from "../../src/providers/responses/envelope";
import { keyResponsesRequest } from "../../src/providers/responses/key";
import { renderResponse, renderResponseEvents, responsesAnswerOf } from "../../src/providers/responses/render";
import type { ResponsesRequest } from "../../src/providers/responses/schema";
import { responsesAdapter } from "../../src/providers/responses/adapter";

/**
 * What a recorded response carried around its output is stored beside the answer (src/providers/responses/envelope.ts)
 * and served back, but never in place of what a hit renders itself: an import may store any object there, and its
 * `id`, `output`, `status`, `model`, counts or another request's echo values must not reach a served response.
 * A response whose JSON a parse would change (a number a double cannot hold, a repeated key) is not recorded.
 */

function stored(message: Record<string, unknown>): StoredAnswer {
  return {
    hash: "b".repeat(32),
    message: message as StoredAnswer["message"],
    observations: 1,
    finishReason: "completed",
    promptTokens: 7,
    completionTokens: 3,
    latencyMs: 1,
  };
}

const items = [{ type: "message", content: [{ type: "text", text: "Refunded." }] }];
const body = { model: "gpt-x", input: "go", metadata: { mine: "yes" } } as ResponsesRequest;

describe("Responses envelope", () => {
  it("Should never let stored fields replace what a hit renders or this request's echo fields (JSON and streamed)", () => {
    const hostile = {
      id: "resp_old",
      status: "failed",
      output: [{ type: "message", content: [] }],
      model: "other-model",
      error: { message: "x" },
      metadata: { theirs: "yes" },
      safety_identifier: "their-user",
      created_at: 5,
      completed_at: 6,
      service_tier: "priority",
      usage: { input_tokens: 999, total_tokens: 999, input_tokens_details: { cached_tokens: 50 }, output_tokens_details: { reasoning_tokens: 2 } },
    };
    const answer = responsesAnswerOf(stored({ role: "assistant", items, "muscle-mem:response": hostile }));
    if (!answer) throw new Error("not an answer");
    const response = renderResponse(answer, body, { id: "resp_mm1", createdAt: 100 });
    expect(response).toMatchObject({
      id: "resp_mm1",
      status: "completed",
      model: "gpt-x",
      error: null,
      created_at: 100,
      completed_at: 100,
      metadata: { mine: "yes" },
      safety_identifier: null,
      service_tier: "priority",
      usage: {
        input_tokens: 7,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 3,
        output_tokens_details: { reasoning_tokens: 2 },
        total_tokens: 10,
      },
    });
    expect((response.output as Array<{ content: unknown[] }>)[0].content).toEqual([{ type: "output_text", annotations: [], logprobs: [], text: "Refunded." }]);
    const created = JSON.parse(renderResponseEvents(answer, body, { id: "resp_mm1", createdAt: 100 }).split("\n")[1].slice(6)) as {
      response: Record<string, unknown>;
    };
    expect(created.response).toMatchObject({ id: "resp_mm1", status: "in_progress", output: [], usage: null, completed_at: null, metadata: { mine: "yes" } });
  });

  it("Should store the recorded fields but instructions and tools equal to the keyed request's, and nothing when nothing differs", () => {
    const instructions = "You are a refund desk. ".repeat(100);
    const tools = [{ type: "function", name: "get_order", parameters: {}, strict: null }];
    const response = {
      id: "r",
      status: "completed",
      instructions,
      tools: [{ ...tools[0], strict: true }],
      temperature: 1,
      max_tool_calls: 5,
      user: "someone",
      usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2, input_tokens_details: { cached_tokens: 1 }, output_tokens_details: { reasoning_tokens: 0 } },
    };
    expect(responseEnvelopeOf(response, { instructions, tools, max_tool_calls: 5 })).toEqual({
      "muscle-mem:response": { tools: response.tools, temperature: 1, max_tool_calls: 5, user: null },
    });
    expect(responseEnvelopeOf({ id: "r", status: "completed", usage: response.usage })).toEqual({});
  });

  it("Should not record a JSON response whose text JSON.parse would change", () => {
    const keyed = keyResponsesRequest({ model: "gpt-x", input: "go" } as ResponsesRequest);
    if (!keyed.ok) throw new Error(JSON.stringify(keyed));
    const raw = JSON.stringify({ model: "gpt-x", input: "go" });
    const reader = responsesAdapter.reader(keyed.key, { body, raw, url: new URL("http://mm.test/v1/responses"), headers: new Headers() });
    const response = (extra: string) =>
      `{"id":"resp_1","object":"response","status":"completed","output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Refunded.","annotations":[]}]}]${extra},"usage":{"input_tokens":5,"output_tokens":3,"total_tokens":8}}`;
    expect(reader.fromJson(response(',"temperature":1'), 1)).not.toBeNull();
    expect(reader.fromJson(response(',"seed":123456789012345678901'), 1)).toBeNull();
    expect(reader.fromJson(response(',"temperature":1,"temperature":0.5'), 1)).toBeNull();
  });
});
