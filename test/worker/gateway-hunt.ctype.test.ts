import { describe, expect, it } from "vitest";
import { recordableType } from "../../src/core/answer-type";
import { expectRecorded, expectRelayedNotRecorded, sse, type Api, type GatewayReply } from "./gateway-hunt.support";

/**
 * A model's whole answer relayed by a gateway under a content-type that is not the answer's form (docs/reliability.md,
 * "Gateways in front of the model, hunted"): a JSON answer labelled `text/html` or `text/plain`, a stream labelled
 * anything but `text/event-stream`. The `openai` package reads such a body as a string on the miss and would get
 * parsed JSON from a hit, so it is relayed as sent and not recorded. The mislabelled cases failed before (recorded,
 * every route); the JSON labels and the absent content-type pin what stays recorded.
 */

const answers: Record<Api, unknown> = {
  chat: {
    id: "gen-1",
    object: "chat.completion",
    created: 1,
    model: "openai/gpt-4o",
    choices: [{ index: 0, message: { role: "assistant", content: "Refunded." }, finish_reason: "stop" }],
    usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
  },
  responses: {
    id: "resp_1",
    object: "response",
    created_at: 1,
    status: "completed",
    model: "gpt-4o",
    output: [{ type: "message", id: "msg_1", status: "completed", role: "assistant", content: [{ type: "output_text", text: "Refunded.", annotations: [] }] }],
    usage: { input_tokens: 5, output_tokens: 2, total_tokens: 7 },
    error: null,
    incomplete_details: null,
  },
  messages: {
    id: "msg_1",
    type: "message",
    role: "assistant",
    model: "claude-sonnet-4-5",
    content: [{ type: "text", text: "Refunded." }],
    stop_reason: "end_turn",
    stop_sequence: null,
    usage: { input_tokens: 5, output_tokens: 2 },
  },
  gemini: {
    candidates: [{ content: { role: "model", parts: [{ text: "Refunded." }] }, index: 0, finishReason: "STOP" }],
    usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 2, totalTokenCount: 7 },
    modelVersion: "gemini-2.5-flash",
  },
};

const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
  id: "gen-1",
  object: "chat.completion.chunk",
  created: 1,
  model: "openai/gpt-4o",
  choices: [{ index: 0, delta, finish_reason: finish }],
});
const chatStream = sse([chunk({ role: "assistant", content: "Refun" }), chunk({ content: "ded." }), chunk({}, "stop"), "[DONE]"]);

const candidate = (parts: unknown[], finish?: string) => ({
  candidates: [{ content: { role: "model", parts }, index: 0, ...(finish ? { finishReason: finish } : {}) }],
  usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 2, totalTokenCount: 7 },
  modelVersion: "gemini-2.5-flash",
});
const geminiStream = sse([candidate([{ text: "Refun" }]), candidate([{ text: "ded." }]), candidate([{ text: "" }], "STOP")]);

const reply = (api: Api, contentType: string | null): GatewayReply => ({ body: JSON.stringify(answers[api]), headers: { "content-type": contentType } });

describe("a JSON answer under another content-type than JSON", () => {
  for (const api of ["chat", "responses", "messages", "gemini"] as const) {
    for (const type of ["text/html", "text/html; charset=utf-8", "text/plain"])
      it(`Should relay ${api}'s answer labelled ${type} as sent and record nothing`, () => expectRelayedNotRecorded(api, reply(api, type), false));
    it(`Should record ${api}'s answer labelled application/json, +json or nothing`, async () => {
      await expectRecorded(api, reply(api, "application/json; charset=UTF-8"), false);
      await expectRecorded(api, reply(api, "application/vnd.gateway+json"), false);
      const { first } = await expectRecorded(api, reply(api, null), false);
      expect(first.headers.get("content-type")).toBeNull();
    });
  }
});

describe("a stream under another content-type than text/event-stream", () => {
  for (const type of ["text/plain", "application/octet-stream", null])
    it(`Should relay a chat stream labelled ${type ?? "nothing"} as sent and record nothing`, () =>
      expectRelayedNotRecorded("chat", { body: chatStream, headers: { "content-type": type } }, true));
  it("Should record the same stream labelled text/event-stream", () =>
    expectRecorded("chat", { body: chatStream, headers: { "content-type": "text/event-stream; charset=utf-8" } }, true));
  it("Should relay a Gemini stream labelled text/plain as sent and record nothing, and record it as text/event-stream", async () => {
    await expectRelayedNotRecorded("gemini", { body: geminiStream, headers: { "content-type": "text/plain; charset=utf-8" } }, true);
    await expectRecorded("gemini", { body: geminiStream, headers: { "content-type": "text/event-stream" } }, true);
  });
});

describe("recordableType", () => {
  it("Should take JSON's media types with any parameters, or none, for a JSON answer, and only text/event-stream for a stream", () => {
    expect(recordableType(null, false)).toBe(true);
    expect(recordableType("", false)).toBe(true);
    expect(recordableType("Application/JSON;charset=utf-8", false)).toBe(true);
    expect(recordableType("application/problem+json", false)).toBe(true);
    expect(recordableType("text/json", false)).toBe(false);
    expect(recordableType("application/jsonp", false)).toBe(false);
    expect(recordableType("text/event-stream", false)).toBe(false);
    expect(recordableType("text/event-stream;charset=UTF-8", true)).toBe(true);
    expect(recordableType(null, true)).toBe(false);
    expect(recordableType("application/json", true)).toBe(false);
  });
});
