import { describe, expect, it } from "vitest";
import { expectRecorded, expectRelayedNotRecorded, sse, type Api, type GatewayReply } from "./gateway-hunt.support";

/**
 * What a gateway in front of the model sends back on the Messages, Responses and Gemini routes (see
 * gateway-hunt.test.ts for Chat Completions): errors, partial answers and bodies that are not the model's answer
 * are relayed as sent and never recorded; a real answer is recorded and served.
 */

const json = (body: unknown, headers: Record<string, string | null> = {}): GatewayReply => ({ body: JSON.stringify(body), headers });
const stream = (events: unknown[], headers: Record<string, string | null> = {}): GatewayReply => ({
  body: sse(events),
  headers: { "content-type": "text/event-stream", ...headers },
});
/** An Anthropic event, named by its type as the API names it. */
const named = (data: { type: string; [k: string]: unknown }) => ({ event: data.type, data });

const message = (extra: Record<string, unknown> = {}) => ({
  id: "msg_1",
  type: "message",
  role: "assistant",
  model: "claude-sonnet-4-5",
  content: [{ type: "text", text: "Refunded." }],
  stop_reason: "end_turn",
  stop_sequence: null,
  usage: { input_tokens: 5, output_tokens: 2 },
  ...extra,
});
const messageEvents = [
  named({ type: "message_start", message: { ...message(), content: [], stop_reason: null, usage: { input_tokens: 5, output_tokens: 1 } } }),
  named({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
  named({ type: "ping" }),
  named({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Refun" } }),
  named({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "ded." } }),
  named({ type: "content_block_stop", index: 0 }),
];
const messageEnd = [
  named({ type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 2 } }),
  named({ type: "message_stop" }),
];

const response = (extra: Record<string, unknown> = {}) => ({
  id: "resp_1",
  object: "response",
  created_at: 1,
  status: "completed",
  model: "gpt-4o",
  output: [{ type: "message", id: "msg_1", status: "completed", role: "assistant", content: [{ type: "output_text", text: "Refunded.", annotations: [] }] }],
  usage: { input_tokens: 5, output_tokens: 2, total_tokens: 7 },
  error: null,
  incomplete_details: null,
  ...extra,
});
const responseEvents = [
  { event: "response.created", data: { type: "response.created", response: { ...response(), status: "in_progress", output: [] } } },
  { event: "response.output_text.delta", data: { type: "response.output_text.delta", item_id: "msg_1", output_index: 0, content_index: 0, delta: "Refun" } },
  { event: "response.output_text.delta", data: { type: "response.output_text.delta", item_id: "msg_1", output_index: 0, content_index: 0, delta: "ded." } },
];
const completed = { event: "response.completed", data: { type: "response.completed", response: response() } };

const candidate = (parts: unknown[], finish?: string) => ({
  candidates: [{ content: { role: "model", parts }, index: 0, ...(finish ? { finishReason: finish } : {}) }],
  usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 2, totalTokenCount: 7 },
  modelVersion: "gemini-2.5-flash",
});
const geminiChunks = [candidate([{ text: "Refun" }]), candidate([{ text: "ded." }])];
const geminiEnd = candidate([{ text: "" }], "STOP");

const html: GatewayReply = { body: "<html><body>502 Bad Gateway</body></html>", headers: { "content-type": "text/html" } };

const cases: Record<Exclude<Api, "chat">, { json: Array<[string, GatewayReply]>; streamed: Array<[string, GatewayReply]> }> = {
  messages: {
    json: [
      ["Anthropic's error type", json({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } })],
      ["an OpenAI-style error object", json({ error: { message: "Provider returned error", code: 502 } })],
      ["LiteLLM's detail", json({ detail: "litellm.ServiceUnavailableError" })],
      ["an error beside the message", json({ ...message(), error: { message: "partial" } })],
      ["a captive portal's HTML", html],
      ["an event stream for a JSON request", stream([...messageEvents, ...messageEnd])],
      ["a stop_reason of null", json(message({ stop_reason: null }))],
      ["Azure APIM's policy error", json({ statusCode: 429, message: "Rate limit is exceeded. Try again in 3 seconds." })],
      ["Ollama's error string", json({ error: "model 'claude' not found" })],
      ["a message under 203 (a transforming proxy changed it)", { ...json(message()), status: 203 }],
    ],
    streamed: [
      ["an error event after some deltas", stream([...messageEvents, named({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } })])],
      ["an error event, then the end", stream([...messageEvents, named({ type: "error", error: { type: "api_error", message: "x" } }), ...messageEnd])],
      [
        "an event named error whose data has no type, then the end",
        stream([...messageEvents, { event: "error", data: { error: { message: "upstream idle timeout" } } }, ...messageEnd]),
      ],
      ["an unnamed error object, then the end", stream([...messageEvents, { error: { message: "Provider returned error" } }, ...messageEnd])],
      ["no message_stop", stream([...messageEvents, messageEnd[0]])],
      ["an error after message_stop", stream([...messageEvents, ...messageEnd, named({ type: "error", error: { type: "api_error", message: "x" } })])],
      ["a JSON message for a streamed request", json(message())],
      ["HTML for a streamed request", html],
    ],
  },
  responses: {
    json: [
      ["an error object", json({ error: { message: "Provider returned error", code: 502 } })],
      ["a failed response", json(response({ status: "failed", output: [], error: { code: "server_error", message: "x" } }))],
      ["a completed response that carries an error", json(response({ error: { code: "server_error", message: "partial output" } }))],
      ["LiteLLM's detail", json({ detail: "litellm.APIError" })],
      ["Azure APIM's policy error", json({ statusCode: 429, message: "Rate limit is exceeded. Try again in 3 seconds." })],
      ["a captive portal's HTML", html],
      ["an event stream for a JSON request", stream([...responseEvents, completed])],
      ["a response under 206 Partial Content", { ...json(response()), status: 206 }],
    ],
    streamed: [
      [
        "response.failed after some deltas",
        stream([...responseEvents, { event: "response.failed", data: { type: "response.failed", response: response({ status: "failed" }) } }]),
      ],
      ["an error event after some deltas", stream([...responseEvents, { event: "error", data: { type: "error", code: "server_error", message: "x" } }])],
      ["an unnamed error object, then completed", stream([...responseEvents, { error: { message: "Provider returned error" } }, completed])],
      [
        "an event named error with no type, then completed",
        stream([...responseEvents, { event: "error", data: { message: "upstream idle timeout" } }, completed]),
      ],
      ["no response.completed", stream(responseEvents)],
      ["a stream under 206 Partial Content", { ...stream([...responseEvents, completed]), status: 206 }],
      [
        "an error after response.completed",
        stream([...responseEvents, completed, { event: "error", data: { type: "error", code: "server_error", message: "x" } }]),
      ],
      ["a JSON response for a streamed request", json(response())],
      ["HTML for a streamed request", html],
    ],
  },
  gemini: {
    json: [
      ["Gemini's error object", json({ error: { code: 503, message: "The model is overloaded.", status: "UNAVAILABLE" } })],
      ["an error beside the candidates", json({ ...candidate([{ text: "Refunded." }], "STOP"), error: { code: 500, message: "partial" } })],
      ["LiteLLM's detail", json({ detail: "litellm.APIError" })],
      ["a JSON array (the stream form without alt=sse)", json([candidate([{ text: "Refunded." }], "STOP")])],
      ["a finish reason of OTHER", json(candidate([{ text: "Refunded." }], "OTHER"))],
      ["Azure APIM's policy error", json({ statusCode: 429, message: "Rate limit is exceeded. Try again in 3 seconds." })],
      ["TGI's error string", json({ error: "Input validation error", error_type: "validation" })],
      ["a captive portal's HTML", html],
      ["an event stream for a JSON request", stream([...geminiChunks, geminiEnd])],
      ["no finish reason", json(candidate([{ text: "Refunded." }]))],
      ["an answer under 203 (a transforming proxy changed it)", { ...json(candidate([{ text: "Refunded." }], "STOP")), status: 203 }],
    ],
    streamed: [
      ["an error chunk after some text", stream([...geminiChunks, { error: { code: 503, message: "overloaded", status: "UNAVAILABLE" } }])],
      ["an error chunk after the finish", stream([...geminiChunks, geminiEnd, { error: { code: 500, message: "internal", status: "INTERNAL" } }])],
      ["an event named error, then the finish", stream([...geminiChunks, { event: "error", data: { message: "upstream idle timeout" } }, geminiEnd])],
      ["an event named error with an empty object, then the finish", stream([...geminiChunks, { event: "error", data: {} }, geminiEnd])],
      ["no finish reason", stream(geminiChunks)],
      ["a JSON answer for a streamed request", json(candidate([{ text: "Refunded." }], "STOP"))],
      ["HTML for a streamed request", html],
    ],
  },
};

for (const [api, sets] of Object.entries(cases) as Array<[Exclude<Api, "chat">, (typeof cases)["gemini"]]>) {
  describe(`${api}: a 200 from a gateway that is not the model's answer`, () => {
    for (const [name, reply] of sets.json) it(`Should relay ${name} (JSON) as sent and record nothing`, () => expectRelayedNotRecorded(api, reply, false));
    for (const [name, reply] of sets.streamed)
      it(`Should relay ${name} (streamed) as sent and record nothing`, () => expectRelayedNotRecorded(api, reply, true));
  });
}

describe("a real answer, however the gateway dresses it", () => {
  it("Should record a Messages stream with pings and a charset, and an answer from another model than requested", async () => {
    const reply = stream([...messageEvents, ...messageEnd], { "content-type": "text/event-stream; charset=utf-8" });
    const { second } = await expectRecorded("messages", reply, true);
    expect(second.text).toContain('"text":"Refunded."');
  });

  it("Should record a Responses stream followed by [DONE] (a compatible server's end marker)", async () => {
    const { second } = await expectRecorded("responses", stream([...responseEvents, completed, "[DONE]"]), true);
    expect(second.text).toContain("Refunded.");
  });

  it("Should record a Gemini JSON answer with its charset (as Google sends it)", async () => {
    const { second } = await expectRecorded(
      "gemini",
      json(candidate([{ text: "Refunded." }], "STOP"), { "content-type": "application/json; charset=UTF-8" }),
      false,
    );
    expect(second.text).toContain('"text":"Refunded."');
  });
});
