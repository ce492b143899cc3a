import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { StoredAnswer } from "../../src/core/answer";
import { renderChunkStream, renderCompletion, servedToolCallId } from "../../src/providers/chat/render";
import { SseAssembler } from "../../src/providers/chat/sse-assembler";

const answer = (content: string | undefined, args = '{"order_id":"Ä-1 ✓ 🧾"}'): StoredAnswer => ({
  hash: "0123456789abcdef0123456789abcdef",
  message: {
    role: "assistant",
    ...(content === undefined ? {} : { content }),
    tool_calls: [
      { id: "call_0", type: "function", function: { name: "get_order", arguments: args } },
      { id: "call_1", type: "function", function: { name: "refund", arguments: "{}" } },
    ],
  },
  observations: 1,
  finishReason: "tool_calls",
  promptTokens: 10,
  completionTokens: 5,
  latencyMs: 100,
});

const ctx = { id: "chatcmpl-x", model: "m", created: 1 };

/** Cuts bytes at the given points. */
function cut(bytes: Uint8Array, points: number[]): Uint8Array[] {
  const sorted = [...new Set(points.map((p) => p % (bytes.length + 1)))].sort((a, b) => a - b);
  const parts: Uint8Array[] = [];
  let start = 0;
  for (const p of sorted) {
    parts.push(bytes.slice(start, p));
    start = p;
  }
  parts.push(bytes.slice(start));
  return parts;
}

describe("rendering and assembling streams", () => {
  it("Should render fresh, deterministic, unique tool-call ids", () => {
    const json = renderCompletion(answer(undefined), ctx) as { choices: Array<{ message: { tool_calls: Array<{ id: string }> } }> };
    const ids = json.choices[0].message.tool_calls.map((c) => c.id);
    expect(ids).toEqual([servedToolCallId(answer(undefined).hash, 0), servedToolCallId(answer(undefined).hash, 1)]);
    expect(new Set(ids).size).toBe(2);
  });

  it("Should end a rendered stream with [DONE] and a usage chunk when asked", () => {
    const text = renderChunkStream(answer("hi"), ctx, true);
    expect(text.endsWith("data: [DONE]\n\n")).toBe(true);
    expect(text).toContain('"choices":[],"usage":{"prompt_tokens":10');
  });

  it("Should assemble the same message wherever the byte stream is cut, even inside UTF-8", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme" }), fc.array(fc.nat(), { maxLength: 12 }), (content, points) => {
        const bytes = new TextEncoder().encode(renderChunkStream(answer(content), ctx, true));
        const assembler = new SseAssembler();
        for (const part of cut(bytes, points)) assembler.feed(part);
        const result = assembler.result();
        expect(result?.finishReason).toBe("tool_calls");
        // What was recorded comes back, "" included (a client doing content.length must not see null).
        expect(result?.message.content).toBe(content);
        expect(result?.message.tool_calls?.map((c) => c.function)).toEqual([
          { name: "get_order", arguments: '{"order_id":"Ä-1 ✓ 🧾"}' },
          { name: "refund", arguments: "{}" },
        ]);
        expect(result?.usage).toEqual({ prompt_tokens: 10, completion_tokens: 5 });
      }),
    );
  });

  it("Should give nothing for a stream cut before [DONE]", () => {
    const text = renderChunkStream(answer("hi"), ctx, false);
    const assembler = new SseAssembler();
    assembler.feed(new TextEncoder().encode(text.slice(0, text.indexOf("data: [DONE]"))));
    expect(assembler.result()).toBeNull();
  });

  it("Should give nothing for a stream that carries an error event", () => {
    const assembler = new SseAssembler();
    assembler.feed(new TextEncoder().encode('data: {"error":{"message":"overloaded"}}\n\ndata: [DONE]\n\n'));
    expect(assembler.result()).toBeNull();
  });
});

describe("a streamed chat answer is recorded only as the model sent it", () => {
  const assembled = (call: Record<string, unknown>) => {
    const assembler = new SseAssembler();
    const chunk = (delta: unknown, finish: string | null = null) => `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    assembler.feed(new TextEncoder().encode(`${chunk({ role: "assistant", tool_calls: [{ index: 0, ...call }] })}${chunk({}, "tool_calls")}data: [DONE]\n\n`));
    return assembler.result();
  };

  it("Should record a streamed tool call's other fields as sent (a thought signature, a function's `strict`), and nothing for a call it cannot replay", () => {
    expect(assembled({ id: "c1", type: "function", function: { name: "f", arguments: "{}" } })?.message.tool_calls).toHaveLength(1);
    // Google's OpenAI-compatible endpoint sends a thought signature the client must echo back: recorded with the call
    // (before 11-28 the stream was not recorded, so a streamed Gemini 3 tool call missed every time).
    expect(
      assembled({ id: "c1", type: "function", function: { name: "f", arguments: "{}" }, extra_content: { google: { thought_signature: "sig" } } })?.message
        .tool_calls,
    ).toEqual([{ id: "c1", type: "function", function: { name: "f", arguments: "{}" }, extra_content: { google: { thought_signature: "sig" } } }]);
    expect(assembled({ id: "c1", type: "custom", custom: { name: "f", input: "x" } })).toBeNull();
    expect(assembled({ id: "c1", type: "function", function: { name: "f", arguments: "{}", strict: true } })?.message.tool_calls).toEqual([
      { id: "c1", type: "function", function: { name: "f", arguments: "{}", strict: true } },
    ]);
    expect(assembled({ id: "c1", type: "function", function: "f" })).toBeNull();
  });
});

describe("a served chat stream carries the recorded message", () => {
  it("Should stream a recorded tool call's other fields (a thought signature) as the JSON hit serves them", () => {
    const call = { id: "call_0", type: "function", function: { name: "f", arguments: '{"a":1}' }, extra_content: { google: { thought_signature: "sig" } } };
    const answer = {
      hash: "h".repeat(32),
      message: { role: "assistant", content: null, tool_calls: [call] },
      observations: 1,
      finishReason: "tool_calls",
      promptTokens: 1,
      completionTokens: 1,
      latencyMs: 1,
    } as unknown as StoredAnswer;
    const deltas = renderChunkStream(answer, { id: "x", model: "m", created: 0 }, false)
      .split("\n\n")
      .filter((e) => e.startsWith("data: {"))
      .map((e) => (JSON.parse(e.slice(6)) as { choices: Array<{ delta: { tool_calls?: Array<Record<string, unknown>> } }> }).choices[0].delta);
    const calls = deltas.flatMap((d) => d.tool_calls ?? []);
    expect(calls[0]).toMatchObject({
      index: 0,
      type: "function",
      function: { name: "f", arguments: "" },
      extra_content: { google: { thought_signature: "sig" } },
    });
    expect(calls[1]).toEqual({ index: 0, function: { arguments: '{"a":1}' } });
  });
});
