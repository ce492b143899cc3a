import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { geminiMissAndHits } from "./gemini-replay.support";
import { withGeminiUpstream } from "./gemini.support";
import { uniqueModel } from "./helpers";
import { postMessages } from "./messages.support";
import { settled } from "./settled";
import { withUpstream, type StubReply } from "./upstream-stub";

/**
 * Answer fidelity 4, tool arguments: a hit serves a call's arguments as the model sent them, numbers in their
 * exact text (`12345678901234567891`, `1.0`, `1e2`) and keys in their order (`"b"` before `"1"`), or the answer
 * is not recorded. Before, Gemini's `functionCall.args` were stored as parsed: a hit served
 * `12345678901234567000` for the id (another order to the agent), `1` for `1.0`, `100` for `1e2`, `"1"` first.
 */

/** Arguments a double-minded writer changes: a 20-digit id, a float written `1.0`, an exponent, an integer-like key after another. */
const ARGS = '{"order_id":12345678901234567891,"qty":1.0,"n":1e2,"b":"x","1":"y"}';
/** The same written by a server that pretty-prints (Gemini's JSON answers are): served compact, numbers and keys as written. */
const PRETTY_ARGS = '{\n  "order_id": 12345678901234567891,\n  "qty": 1.0,\n  "n": 1e2,\n  "b": "x",\n  "1": "y"\n}';

const body = { contents: [{ role: "user", parts: [{ text: "Refund order 12345678901234567891." }] }] };
const usage = '"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":4,"totalTokenCount":9}';
const call = (args: string) => `{"functionCall":{"name":"refund","args":${args}}}`;
const response = (parts: string, finish = ',"finishReason":"STOP"', tail = `,${usage}`) =>
  `{"candidates":[{"content":{"role":"model","parts":[${parts}]}${finish},"index":0}]${tail},"modelVersion":"stub"}`;

describe("replay fidelity 4: Gemini functionCall.args as the model sent them", () => {
  it("Should serve a JSON recording's args with their exact numbers and key order, JSON and streamed (was: 12345678901234567000, 1, 100)", async () => {
    const out = await geminiMissAndHits(body, { text: response(`${call(ARGS)},${call('{"id":9007199254740993}')}`) }, false);
    expect(out.json).not.toBeNull();
    expect(out.json).toContain(`"args":${ARGS}`);
    expect(out.json).toContain('"args":{"id":9007199254740993}');
    expect(out.stream).toContain(`"args":${ARGS}`);
    expect(out.stream).toContain('"args":{"id":9007199254740993}');
  });

  it("Should serve a pretty-printed answer's args compact, numbers and keys as written", async () => {
    const text = `{\n  "candidates": [\n    {\n      "content": {\n        "role": "model",\n        "parts": [\n          {\n            "functionCall": {\n              "name": "refund",\n              "args": ${PRETTY_ARGS}\n            }\n          }\n        ]\n      },\n      "finishReason": "STOP",\n      "index": 0\n    }\n  ],\n  ${usage}\n}`;
    const out = await geminiMissAndHits(body, { text }, false);
    expect(out.json).toContain(`"args":${ARGS}`);
    expect(out.stream).toContain(`"args":${ARGS}`);
    // Each streamed event is one `data:` line: the args' own line breaks are not served.
    expect(out.stream?.split("\r\n\r\n").every((event) => !event.includes("\n"))).toBe(true);
  });

  it("Should serve a streamed recording's args as its chunk wrote them, JSON and streamed", async () => {
    const sse = [response('{"text":"Refunding."}', "", ""), response(call(ARGS))];
    const out = await geminiMissAndHits(body, { sse }, true);
    expect(out.stream).not.toBeNull();
    expect(out.stream).toContain(`"args":${ARGS}`);
    expect(out.json).toContain(`"args":${ARGS}`);
  });

  it("Should write args JavaScript's way where the model did", async () => {
    const out = await geminiMissAndHits(body, { text: response(call('{"qty":1,"n":100,"b":"x"}')) }, false);
    expect(out.json).toContain('"args":{"qty":1,"n":100,"b":"x"}');
    expect(out.stream).toContain('"args":{"qty":1,"n":100,"b":"x"}');
  });
});

/** A Messages miss answered by `reply`, then a JSON and a streamed hit (null when nothing was recorded). */
async function messagesMissAndHits(reply: StubReply, stream: boolean) {
  const model = `claude-fid4-${crypto.randomUUID().slice(0, 8)}`;
  const key = `sk-ant-fid4-${crypto.randomUUID()}`;
  const ask = (asStream: boolean) => ({ model, max_tokens: 64, messages: [{ role: "user", content: "Refund order A-1." }], stream: asStream });
  await settled(() => withUpstream(reply, async () => (await postMessages(ask(stream), { key })).text()));
  const probe = async (asStream: boolean) => {
    const res = await postMessages(ask(asStream), { key, headers: { "cache-control": "only-if-cached" } });
    const text = await res.text();
    return res.status === 504 ? null : text;
  };
  return { json: await probe(false), stream: await probe(true) };
}

/** The tool input a streamed Messages body carries: its `partial_json` pieces joined. */
const streamedInput = (text: string) => [...text.matchAll(/"partial_json":("(?:[^"\\]|\\.)*")/g)].map((m) => JSON.parse(m[1]) as string).join("");

const EXACT_INPUT = '{"qty": 1.0, "n": 1e2, "b": "x", "1": "y"}';

function messageText(input: string): string {
  return `{"id":"msg_up","type":"message","role":"assistant","model":"m","content":[{"type":"tool_use","id":"toolu_1","name":"refund","input":${input}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":7}}`;
}

function messageEvents(pieces: string[]): string {
  const events: Array<[string, string]> = [
    [
      "message_start",
      '{"type":"message_start","message":{"id":"msg_up","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}}',
    ],
    ["content_block_start", '{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"refund","input":{}}}'],
    ...pieces.map((p): [string, string] => [
      "content_block_delta",
      `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":${JSON.stringify(p)}}}`,
    ]),
    ["content_block_stop", '{"type":"content_block_stop","index":0}'],
    ["message_delta", '{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":7}}'],
    ["message_stop", '{"type":"message_stop"}'],
  ];
  return events.map(([name, data]) => `event: ${name}\ndata: ${data}\n\n`).join("");
}

describe("replay fidelity 4: Anthropic tool_use.input as the model wrote it", () => {
  it("Should serve a JSON answer's input with its numbers' text and key order, JSON and streamed", async () => {
    const out = await messagesMissAndHits({ text: messageText(EXACT_INPUT) }, false);
    expect(out.json).toContain(`"input":${EXACT_INPUT}`);
    expect(streamedInput(out.stream ?? "")).toBe(EXACT_INPUT);
  });

  it("Should serve a streamed answer's input_json_delta text, JSON and streamed", async () => {
    const out = await messagesMissAndHits(
      { text: messageEvents(['{"qty": 1.', '0, "n": 1e2, "b": "x",', ' "1": "y"}']), contentType: "text/event-stream" },
      true,
    );
    expect(streamedInput(out.stream ?? "")).toBe(EXACT_INPUT);
    expect(out.json).toContain(`"input":${EXACT_INPUT}`);
  });

  it("Should not record an input whose integer a double cannot hold (no hit could serve the id), JSON or streamed", async () => {
    const big = '{"order_id": 12345678901234567891}';
    expect(await messagesMissAndHits({ text: messageText(big) }, false)).toEqual({ json: null, stream: null });
    expect(await messagesMissAndHits({ text: messageEvents([big]), contentType: "text/event-stream" }, true)).toEqual({ json: null, stream: null });
  });
});

describe("replay fidelity 4: Gemini's OpenAI-compatible route", () => {
  /** A miss on the compat route answered by `text`, then the same request as a JSON hit. */
  async function compatMissAndHit(text: string, contentType: string, stream: boolean) {
    const key = `gm-fid4-${crypto.randomUUID()}`;
    const model = uniqueModel("gem-compat-fid4");
    const send = (asStream: boolean, headers: Record<string, string> = {}) =>
      exports.default.fetch(
        new Request("http://mm.test/v1beta/openai/chat/completions", {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${key}`, ...headers },
          body: JSON.stringify({ model, messages: [{ role: "user", content: "Refund it." }], stream: asStream }),
        }),
      );
    await settled(() => withGeminiUpstream({ text, contentType }, async () => (await send(stream)).text()));
    const res = await send(false, { "cache-control": "only-if-cached" });
    return res.status === 504 ? null : ((await res.json()) as { choices: Array<{ message: { tool_calls: Array<{ function: { arguments: string } }> } }> });
  }

  const ARGUMENTS = '{"order_id": 12345678901234567891, "qty": 1.0, "n": 1e2, "b": "x", "1": "y"}';
  const toolCall = { id: "call_up", type: "function", function: { name: "refund", arguments: ARGUMENTS } };

  it("Should serve a JSON answer's call arguments byte for byte", async () => {
    const completion = {
      id: "c",
      object: "chat.completion",
      created: 1,
      model: "m",
      choices: [{ index: 0, message: { role: "assistant", content: null, tool_calls: [toolCall] }, finish_reason: "tool_calls" }],
      usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 },
    };
    const hit = await compatMissAndHit(JSON.stringify(completion), "application/json", false);
    expect(hit?.choices[0].message.tool_calls[0].function.arguments).toBe(ARGUMENTS);
  });

  it("Should serve a streamed answer's call arguments byte for byte", async () => {
    const chunk = (delta: unknown, finish: string | null) =>
      `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    const sse = [
      chunk(
        { role: "assistant", tool_calls: [{ index: 0, id: "call_up", type: "function", function: { name: "refund", arguments: ARGUMENTS.slice(0, 30) } }] },
        null,
      ),
      chunk({ tool_calls: [{ index: 0, function: { arguments: ARGUMENTS.slice(30) } }] }, null),
      chunk({}, "tool_calls"),
      "data: [DONE]\n\n",
    ].join("");
    const hit = await compatMissAndHit(sse, "text/event-stream", true);
    expect(hit?.choices[0].message.tool_calls[0].function.arguments).toBe(ARGUMENTS);
  });
});
