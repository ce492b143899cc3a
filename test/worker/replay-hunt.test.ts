import { exports } from "cloudflare:workers";
import OpenAI from "openai";
import { describe, expect, it, vi } from "vitest";
import { uniqueModel } from "./helpers";
import { settled } from "./settled";
import { chunks, completion, withUpstream, type StubReply } from "./upstream-stub";

/**
 * The answer side of a wrong replay, Chat Completions: a hit must be what the model sent (ids, `created`
 * and the renewed fields aside), or the answer must not be recorded. Each case stubs the upstream with one
 * answer, sends the miss, and reads what the `openai` package makes of the miss and of a JSON and a
 * streamed hit (ChatCompletionStream: the official stream parser).
 */

type Completion = OpenAI.ChatCompletion;

/** The `openai` package talking to the Worker in this isolate (whichever `exports.default.fetch` is current). */
function client(key: string): OpenAI {
  return new OpenAI({ apiKey: key, baseURL: "http://mm.test/v1", maxRetries: 0, fetch: (input, init) => exports.default.fetch(new Request(input, init)) });
}

/** What the `openai` package makes of a request: `create`'s completion, or the `.stream()` helper's final completion. */
async function ask(
  openai: OpenAI,
  body: OpenAI.ChatCompletionCreateParamsNonStreaming,
  stream: boolean,
  headers: Record<string, string> = {},
): Promise<Completion> {
  if (!stream) return openai.chat.completions.create(body, { headers });
  return (await openai.chat.completions.stream({ ...body, stream: true }, { headers }).finalChatCompletion()) as Completion;
}

/** The message a client reads, without what a hit renews (tool-call ids). */
function messageOf(c: Completion): Record<string, unknown> {
  const message = c.choices[0]?.message as unknown as Record<string, unknown>;
  const calls = message.tool_calls as Array<Record<string, unknown>> | undefined;
  return { ...message, ...(calls ? { tool_calls: calls.map((call, i) => ({ ...call, id: `call ${i}` })) } : {}) };
}

/**
 * The message as both forms can carry it, to compare a JSON answer with a stream: without what only one form
 * has (the stream helper's `parsed`, null fields, empty lists, an empty content).
 */
function acrossForms(c: Completion): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(messageOf(c))) if (k !== "parsed" && v !== null && v !== "" && !(Array.isArray(v) && v.length === 0)) out[k] = v;
  return out;
}

/**
 * Sends one request whose upstream answers `reply` (streamed or not), then asks only-if-cached as JSON and as a
 * stream: what the client made of the miss, and of each hit (null when nothing was recorded).
 */
async function missAndHits(reply: StubReply, streamed: boolean) {
  const openai = client(`sk-hunt-${crypto.randomUUID()}`);
  const body: OpenAI.ChatCompletionCreateParamsNonStreaming = { model: uniqueModel("hunt"), messages: [{ role: "user", content: "Refund order A-1." }] };
  const miss = await settled(() => withUpstream(reply, () => ask(openai, body, streamed)));
  const probe = async (stream: boolean) => {
    try {
      return await ask(openai, body, stream, { "cache-control": "only-if-cached" });
    } catch (error) {
      if (error instanceof OpenAI.APIError && error.status === 504) return null;
      throw error;
    }
  };
  return { streamed, miss, json: await probe(false), stream: await probe(true) };
}

/** Expects each hit to carry the miss's message, exactly in the miss's own form (or nothing recorded, when `recorded` is false). */
function expectFaithful(out: Awaited<ReturnType<typeof missAndHits>>, recorded: boolean): void {
  expect(out.json !== null).toBe(recorded);
  expect(out.stream !== null).toBe(recorded);
  if (!out.json || !out.stream) return;
  const [same, other] = out.streamed ? [out.stream, out.json] : [out.json, out.stream];
  expect(messageOf(same)).toEqual(messageOf(out.miss));
  expect(acrossForms(other)).toEqual(acrossForms(out.miss));
}

const call = (index: number, fields: Record<string, unknown>) => ({ tool_calls: [{ index, ...fields }] });

describe("replay hunt: chat completions", () => {
  it("Should serve a streamed call whose name comes again on later chunks under that name once (was: `lookuplookup`), and not record one named twice otherwise", async () => {
    // Fireworks and MiniMax (NVIDIA NIM) send a call's name (and id) on every chunk of it: the assembler joined
    // the names, so a hit named a tool that does not exist. The openai package keeps the last name sent.
    const calls = (second: string) =>
      chunks(
        [
          { role: "assistant", content: null },
          call(0, { id: "call_a", type: "function", function: { name: "lookup", arguments: "" } }),
          call(0, { id: "call_a", type: "function", function: { name: second, arguments: '{"id":1}' } }),
        ],
        "tool_calls",
      );
    const legacy = (second: string) =>
      chunks(
        [{ role: "assistant", content: null, function_call: { name: "lookup", arguments: "" } }, { function_call: { name: second, arguments: "{}" } }],
        "function_call",
      );
    for (const sse of [calls("lookup"), legacy("lookup")]) {
      const out = await missAndHits({ sse }, true);
      expect(JSON.stringify(out.stream)).toContain('"name":"lookup"');
      expectFaithful(out, true);
    }
    // A name sent in pieces, or two names: the openai package keeps `up`, a client that joins them `lookup`.
    for (const sse of [calls("up"), legacy("up")]) expectFaithful(await missAndHits({ sse }, true), false);
  });

  it("Should not record a stream whose content or refusal delta is not text (was: recorded as an empty answer)", async () => {
    // Mistral's reasoning models stream `delta.content` as a list of chunks: the assembler skipped them and recorded content null.
    const parts = chunks([{ role: "assistant", content: [{ type: "text", text: "Refunded." }] }]);
    const refusal = chunks([{ role: "assistant", content: "Hi" }, { refusal: { text: "No." } }]);
    for (const sse of [parts, refusal]) expectFaithful(await missAndHits({ sse }, true), false);
  });

  it("Should not record a JSON answer whose content is a list of parts (was: served joined, or as `[object Object]`)", async () => {
    const texts = completion({
      role: "assistant",
      content: [
        { type: "text", text: "Refun" },
        { type: "text", text: "ded." },
      ],
    });
    const refusal = completion({ role: "assistant", content: [{ type: "refusal", refusal: "No." }] });
    const empty = completion(
      { role: "assistant", content: [], tool_calls: [{ id: "a", type: "function", function: { name: "f", arguments: "{}" } }] },
      "tool_calls",
    );
    for (const json of [texts, refusal, empty]) expectFaithful(await missAndHits({ json }, false), false);
  });

  it("Should not record a streamed tool call whose arguments are not text or whose index is not a place in the list (was: `[object Object]`, or the call dropped)", async () => {
    const object = chunks(
      [{ role: "assistant", content: null }, call(0, { id: "call_a", type: "function", function: { name: "f", arguments: { id: 1 } } })],
      "tool_calls",
    );
    const negative = chunks(
      [{ role: "assistant", content: "Hi" }, call(-1, { id: "call_a", type: "function", function: { name: "f", arguments: "{}" } })],
      "tool_calls",
    );
    const fraction = chunks(
      [{ role: "assistant", content: "Hi" }, call(0.5, { id: "call_a", type: "function", function: { name: "f", arguments: "{}" } })],
      "tool_calls",
    );
    const served: unknown[] = [];
    for (const sse of [object, negative, fraction]) served.push((await missAndHits({ sse }, true)).json?.choices[0].message ?? null);
    expect(served).toEqual([null, null, null]);
  });

  it("Should not record a streamed call whose index comes again with another id (was: two calls recorded as one)", async () => {
    // An upstream that numbers every parallel call 0: the second call's arguments were appended to the first's.
    const sse = chunks(
      [
        { role: "assistant", content: null },
        call(0, { id: "call_a", type: "function", function: { name: "refund", arguments: '{"order":"A-1"}' } }),
        call(0, { id: "call_b", type: "function", function: { arguments: '{"order":"A-2"}' } }),
      ],
      "tool_calls",
    );
    expectFaithful(await missAndHits({ sse }, true), false);
  });

  it("Should serve parallel tool calls in their index order with their arguments byte for byte (odd numbers, repeated keys, escapes)", async () => {
    const args0 = '{"qty": 1.0, "big": 12345678901234567890, "neg": -0, "huge": 1e400, "a": 1, "a": 2}';
    const sse = chunks(
      [
        { role: "assistant", content: "" },
        call(1, { id: "call_b", type: "function", function: { name: "second", arguments: '{"x":"\\u2028\\u0000"}' } }),
        call(0, { id: "call_a", type: "function", function: { name: "first", arguments: args0.slice(0, 10) } }),
        call(0, { function: { arguments: args0.slice(10) } }),
      ],
      "tool_calls",
    );
    expectFaithful(await missAndHits({ sse }, true), true);
    const json = completion(
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "b", type: "function", function: { name: "second", arguments: '{"x":"\\u2028"}' } },
          { id: "a", type: "function", function: { name: "first", arguments: args0 } },
        ],
      },
      "tool_calls",
    );
    expectFaithful(await missAndHits({ json }, false), true);
  });

  it("Should serve text with U+2028, NUL and 100 KB as sent, and not record a lone surrogate", async () => {
    const text = `a\u2028b\u0000c${"x".repeat(100_000)}`;
    expectFaithful(await missAndHits({ json: completion({ role: "assistant", content: text }) }, false), true);
    expectFaithful(await missAndHits({ sse: chunks([{ role: "assistant", content: text.slice(0, 3) }, { content: text.slice(3) }]) }, true), true);
    expectFaithful(await missAndHits({ text: JSON.stringify(completion({ role: "assistant", content: "x" })).replace('"x"', '"\\ud800x"') }, false), false);
  });

  it("Should serve a refusal, annotations and a `length` stop as sent, and not record a `content_filter` stop", async () => {
    const json = {
      ...(completion({ role: "assistant", content: null, refusal: "I can't help with that.", annotations: [] }) as Record<string, unknown>),
      service_tier: "default",
      system_fingerprint: "fp_1",
    };
    expectFaithful(await missAndHits({ json }, false), true);
    const annotated = completion({
      role: "assistant",
      content: "See example.com.",
      annotations: [{ type: "url_citation", url_citation: { url: "https://example.com", title: "E", start_index: 4, end_index: 15 } }],
    });
    expectFaithful(await missAndHits({ json: annotated }, false), true);
    expectFaithful(await missAndHits({ json: completion({ role: "assistant", content: "Cut sho" }, "length") }, false), true);
    expectFaithful(await missAndHits({ json: completion({ role: "assistant", content: "Filtered" }, "content_filter") }, false), false);
  });

  it("Should serve a stream recorded from CRLF lines, comments, `event:` lines and bytes cut inside UTF-8 and inside `data:`", async () => {
    const events = chunks([{ role: "assistant", content: "" }, { content: "Réfund é 😀" }, { content: " done" }]);
    const text = `: keep-alive\r\n\r\n${events.map((d) => `event: message\r\ndata: ${d}\r\n\r\n`).join(": ping\r\n\r\n")}`;
    const bytes = new TextEncoder().encode(text);
    const cuts = [3, 9, 40, bytes.indexOf(0xf0) + 1, bytes.indexOf(0xf0) + 2, bytes.length - 5];
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        let at = 0;
        for (const cut of [...cuts, bytes.length]) {
          controller.enqueue(bytes.slice(at, cut));
          at = cut;
        }
        controller.close();
      },
    });
    const openai = client(`sk-hunt-${crypto.randomUUID()}`);
    const req: OpenAI.ChatCompletionCreateParamsNonStreaming = { model: uniqueModel("hunt"), messages: [{ role: "user", content: "x" }] };
    const real = globalThis.fetch;
    const spy = vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      if (url.pathname.endsWith("/chat/completions")) return new Response(body, { headers: { "content-type": "text/event-stream" } });
      return real(input, init);
    });
    const miss = await settled(() => ask(openai, req, true)).finally(() => spy.mockRestore());
    expect(miss.choices[0].message.content).toBe("Réfund é 😀 done");
    const hit = await ask(openai, req, true, { "cache-control": "only-if-cached" });
    expect(messageOf(hit)).toEqual(messageOf(miss));
  });
});
