import { describe, expect, it } from "vitest";
import { expectRecorded, expectRelayedNotRecorded, sse, type GatewayReply } from "./gateway-hunt.support";

/**
 * What a gateway in front of the model (OpenRouter, LiteLLM, Portkey, Helicone, AI Gateway, Azure APIM, vLLM,
 * Ollama, TGI) sends back on Chat Completions: an error, a partial answer or something that is not the model's
 * answer is relayed as sent and never recorded (the second identical request reaches the model again); a real
 * answer, however dressed, is recorded and served.
 */

const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) => ({
  id: "gen-1",
  object: "chat.completion.chunk",
  created: 1,
  model: "openai/gpt-4o",
  choices: [{ index: 0, delta, finish_reason: finish }],
  ...extra,
});
const completion = (extra: Record<string, unknown> = {}, finish = "stop") => ({
  id: "gen-1",
  object: "chat.completion",
  created: 1,
  model: "openai/gpt-4o",
  choices: [{ index: 0, message: { role: "assistant", content: "Refunded." }, finish_reason: finish }],
  usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
  ...extra,
});
const json = (body: unknown, headers: Record<string, string | null> = {}): GatewayReply => ({ body: JSON.stringify(body), headers });
const stream = (events: unknown[], headers: Record<string, string | null> = {}): GatewayReply => ({
  body: sse(events),
  headers: { "content-type": "text/event-stream", ...headers },
});
const answer = [chunk({ role: "assistant", content: "" }), chunk({ content: "Refun" }), chunk({ content: "ded." })];

/** The text a streamed chat body carries (its deltas' content joined). */
function streamedText(text: string): string {
  let out = "";
  for (const line of text.split("\n")) {
    if (!line.startsWith("data: ") || line === "data: [DONE]") continue;
    const data = JSON.parse(line.slice(6)) as { choices?: Array<{ delta?: { content?: string } }> };
    out += data.choices?.[0]?.delta?.content ?? "";
  }
  return out;
}

describe("a 200 from a gateway that is not the model's answer (JSON)", () => {
  const cases: Array<[string, GatewayReply]> = [
    [
      "OpenRouter's error object",
      json({ error: { code: 502, message: "Provider returned error", metadata: { provider_name: "OpenAI", raw: "upstream 502" } } }),
    ],
    ["LiteLLM / FastAPI's detail", json({ detail: "litellm.APIConnectionError: connection refused" })],
    ["an error beside the choices", json({ ...completion(), error: { message: "partial: provider timed out" } })],
    ["OpenRouter's finish_reason error", json(completion({}, "error"))],
    ["a captive portal's HTML", { body: "<html><body>Sign in to the network</body></html>", headers: { "content-type": "text/html" } }],
    ["an event stream for a JSON request", stream([...answer, chunk({}, "stop"), "[DONE]"])],
    ["an error object with no content-type", json({ error: { message: "rate limited by the gateway" } }, { "content-type": null })],
    ["a finish_reason of null", json(completion({}, null as unknown as string))],
    ["Azure APIM's policy error", json({ statusCode: 429, message: "Rate limit is exceeded. Try again in 3 seconds." })],
    ["TGI's error string", json({ error: "Input validation error", error_type: "validation" })],
    ["vLLM's error object", json({ object: "error", message: "The model does not exist.", type: "NotFoundError", code: 404 })],
    ["an answer under 206 Partial Content", { ...json(completion()), status: 206 }],
    ["an answer under 203 (a transforming proxy changed it)", { ...json(completion()), status: 203 }],
    ["an answer under 202 Accepted", { ...json(completion()), status: 202 }],
  ];
  for (const [name, reply] of cases) it(`Should relay ${name} as sent and record nothing`, () => expectRelayedNotRecorded("chat", reply, false));
});

describe("a streamed answer a gateway broke (chat chunks)", () => {
  const openRouterError = chunk({ content: "" }, "error", { error: { code: 502, message: "Provider disconnected" } });
  const cases: Array<[string, GatewayReply]> = [
    ["OpenRouter's error chunk after some deltas", stream([...answer, openRouterError, "[DONE]"])],
    ["finish_reason error with no error field", stream([...answer, chunk({}, "error"), "[DONE]"])],
    ["an error as its own event after some deltas", stream([...answer, { error: { message: "upstream idle timeout" } }, chunk({}, "stop"), "[DONE]"])],
    ["no [DONE] after the finish chunk", stream([...answer, chunk({}, "stop")])],
    ["an error after [DONE]", stream([...answer, chunk({}, "stop"), "[DONE]", { error: { message: "post-call guardrail failed" } }])],
    ["a chunk after [DONE]", stream([...answer, chunk({}, "stop"), "[DONE]", chunk({ content: " And more." })])],
    ["a JSON answer for a streamed request (a gateway that ignores stream)", json(completion())],
    ["an error object for a streamed request", json({ error: { message: "Provider returned error", code: 429 } })],
    ["HTML for a streamed request", { body: "<html>502 Bad Gateway</html>", headers: { "content-type": "text/html" } }],
    [
      "chunks that carry a whole message instead of a delta (a server that streams completions)",
      stream([{ ...chunk({}), choices: [{ index: 0, message: { role: "assistant", content: "Refunded." }, finish_reason: "stop" }] }, "[DONE]"]),
    ],
    ["a stream under 206 Partial Content", { ...stream([...answer, chunk({}, "stop"), "[DONE]"]), status: 206 }],
  ];
  for (const [name, reply] of cases) it(`Should relay ${name} as sent and record nothing`, () => expectRelayedNotRecorded("chat", reply, true));
});

describe("a real answer, however the gateway dresses it", () => {
  it("Should record a JSON answer sent with a charset, and serve it", async () => {
    const { second } = await expectRecorded("chat", json(completion(), { "content-type": "application/json; charset=utf-8" }), false);
    expect((JSON.parse(second.text) as ReturnType<typeof completion>).choices[0].message.content).toBe("Refunded.");
  });

  it("Should record a JSON answer sent with no content-type, and serve it as JSON", async () => {
    const { first, second } = await expectRecorded("chat", json(completion(), { "content-type": null }), false);
    expect(first.headers.get("content-type")).toBeNull();
    expect(second.headers.get("content-type")).toContain("application/json");
    expect((JSON.parse(second.text) as ReturnType<typeof completion>).choices[0].message.content).toBe("Refunded.");
  });

  it("Should record a stream with usage-only chunks, empty deltas, comments, vendor keys and [DONE] twice", async () => {
    const vendor = { provider: "OpenAI", system_fingerprint: null };
    const body =
      ": OPENROUTER PROCESSING\n\n" +
      sse([
        chunk({ role: "assistant", content: "" }, null, vendor),
        chunk({}, null, vendor),
        chunk({ content: "Refun" }, null, vendor),
        chunk({ content: "ded." }, null, vendor),
        { ...chunk({}, "stop", vendor), choices: [{ index: 0, delta: {}, finish_reason: "stop", native_finish_reason: "stop" }] },
        {
          id: "gen-1",
          object: "chat.completion.chunk",
          created: 1,
          model: "openai/gpt-4o",
          choices: [],
          usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
          ...vendor,
        },
        "[DONE]",
        "[DONE]",
      ]);
    const { second } = await expectRecorded("chat", { body, headers: { "content-type": "text/event-stream; charset=utf-8" } }, true);
    expect(streamedText(second.text)).toBe("Refunded.");
    expect(second.text).toContain('"provider":"OpenAI"');
  });

  it("Should record an answer from another model than requested (a gateway's fallback): the recorded message is the upstream's answer to this request", async () => {
    const { second } = await expectRecorded("chat", json(completion({ model: "anthropic/claude-3.5-sonnet", provider: "Anthropic" })), false);
    const hit = JSON.parse(second.text) as ReturnType<typeof completion> & { provider: string };
    expect(hit.choices[0].message.content).toBe("Refunded.");
    expect(hit.provider).toBe("Anthropic");
  });
});

/** `text` as UTF-8 bytes with `at` (a marker in it) replaced by `bytes`. */
function withBytes(text: string, at: string, bytes: number[]): Uint8Array<ArrayBuffer> {
  const [before, after] = text.split(at);
  const enc = new TextEncoder();
  return new Uint8Array([...enc.encode(before), ...bytes, ...enc.encode(after)]);
}

describe("bytes that are not the UTF-8 text they claim to be", () => {
  const body = JSON.stringify(completion()).replace("Refunded.", "Refunded @.");
  const streamed = sse([chunk({ role: "assistant", content: "" }), chunk({ content: "Refunded @." }), chunk({}, "stop"), "[DONE]"]);

  it("Should relay a JSON answer holding a byte that is not UTF-8 byte for byte, and record nothing", () =>
    expectRelayedNotRecorded("chat", { body: withBytes(body, "@", [0xff]) }, false));

  it("Should relay a streamed answer holding a byte that is not UTF-8 byte for byte, and record nothing", () =>
    expectRelayedNotRecorded("chat", { body: withBytes(streamed, "@", [0xff]), headers: { "content-type": "text/event-stream" } }, true));

  it("Should relay a JSON answer in another charset as sent, and record nothing", () =>
    expectRelayedNotRecorded("chat", { body: withBytes(body, "@", [0xe9]), headers: { "content-type": "application/json; charset=iso-8859-1" } }, false));

  it("Should relay a streamed answer in another charset as sent, and record nothing", () =>
    expectRelayedNotRecorded("chat", { body: withBytes(streamed, "@", [0xe9]), headers: { "content-type": "text/event-stream; charset=iso-8859-1" } }, true));

  it("Should relay a JSON answer with a byte-order mark byte for byte, and record the answer it holds", async () => {
    const { second } = await expectRecorded("chat", { body: withBytes(`@${JSON.stringify(completion())}`, "@", [0xef, 0xbb, 0xbf]) }, false);
    expect((JSON.parse(second.text) as ReturnType<typeof completion>).choices[0].message.content).toBe("Refunded.");
  });
});
