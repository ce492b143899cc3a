import { describe, expect, it } from "vitest";
import { messagesAdapter } from "../../src/providers/anthropic/adapter";
import { anthropicAnswerOf, renderEventStream, renderMessage } from "../../src/providers/anthropic/render";
import type { StoredAnswer } from "../../src/core/answer";
import { AnthropicSseAssembler } from "../../src/providers/anthropic/sse-assembler";

/**
 * A streamed Messages answer whose `content_block_start` carries a field beside the block's own (the
 * API's `caller: {type: "direct"}` on every tool call, in the SDK's ToolUseBlock) is recorded with it,
 * as its JSON answer is, and a hit serves it back: before, such a stream was never recorded, so no
 * streamed tool call was cached.
 */

const body = messagesAdapter.schema.parse({ model: "claude-x", max_tokens: 64, messages: [{ role: "user", content: "Refund order A-1." }] });
const request = { body, raw: JSON.stringify(body), url: new URL("http://mm.test/v1/messages"), headers: new Headers({ "anthropic-version": "2023-06-01" }) };
const keyed = messagesAdapter.key(request, { tenant: "t", namespace: "default", maxMessageBytes: 900_000 });
if (!keyed.ok) throw new Error(JSON.stringify(keyed));
const reader = () => messagesAdapter.reader(keyed.key, request);

const caller = { type: "direct" };
const toolUse = { type: "tool_use", id: "toolu_01", name: "get_order", input: { order_id: "A-1" }, caller };
const message = {
  id: "msg_1",
  type: "message",
  role: "assistant",
  model: "claude-x",
  content: [{ type: "text", text: "Let me look." }, toolUse],
  stop_reason: "tool_use",
  stop_sequence: null,
  usage: { input_tokens: 5, output_tokens: 9 },
};

function stream(startExtra: Record<string, unknown>): string {
  const events = [
    { type: "message_start", message: { ...message, content: [], stop_reason: null } },
    { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
    { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Let me look." } },
    { type: "content_block_stop", index: 0 },
    { type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "toolu_01", name: "get_order", input: {}, ...startExtra } },
    { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '{"order_id":"A-1"}' } },
    { type: "content_block_stop", index: 1 },
    { type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 9 } },
    { type: "message_stop" },
  ];
  return events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join("");
}

function streamed(startExtra: Record<string, unknown>) {
  const s = reader().stream();
  s.feed(new TextEncoder().encode(stream(startExtra)));
  return s.finish(1);
}

const stored = (json: string, hash: string): StoredAnswer => ({
  hash,
  message: JSON.parse(json) as StoredAnswer["message"],
  observations: 1,
  finishReason: "tool_use",
  promptTokens: 5,
  completionTokens: 9,
  latencyMs: 1,
});

describe("Anthropic streams: a content block's other fields", () => {
  it("Should record a streamed tool call with its caller as the JSON answer records it (same node, same message)", () => {
    const fromStream = streamed({ caller });
    const fromJson = reader().fromJson(JSON.stringify(message), 1);
    expect(fromStream).not.toBeNull();
    expect(fromJson).not.toBeNull();
    expect(fromStream!.answer.hash).toBe(fromJson!.answer.hash);
    expect(JSON.parse(fromStream!.answer.json)).toEqual(JSON.parse(fromJson!.answer.json));
  });

  it("Should key the default caller as no caller: the answer's node, and a history that echoes the call with or without it", () => {
    const withCaller = reader().fromJson(JSON.stringify(message), 1)!;
    const withoutCaller = reader().fromJson(JSON.stringify({ ...message, content: [message.content[0], { ...toolUse, caller: undefined }] }), 1)!;
    expect(withCaller.answer.hash).toBe(withoutCaller.answer.hash);
    expect(JSON.parse(withoutCaller.answer.json).content[1]).not.toHaveProperty("caller");
    const next = (call: Record<string, unknown>) => {
      const b = messagesAdapter.schema.parse({
        ...body,
        messages: [
          ...body.messages,
          { role: "assistant", content: [message.content[0], call] },
          { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_01", content: "delivered" }] },
        ],
      });
      const k = messagesAdapter.key({ ...request, body: b, raw: JSON.stringify(b) }, { tenant: "t", namespace: "default", maxMessageBytes: 900_000 });
      if (!k.ok) throw new Error(JSON.stringify(k));
      return k.key;
    };
    const { caller: _, ...bare } = toolUse;
    expect(next(toolUse).key).toBe(next(bare).key);
    expect(next(toolUse).path[1].hash).toBe(withCaller.answer.hash);
    // Another caller (a server tool's code calling the tool) is another call.
    expect(next({ ...toolUse, caller: { type: "code_execution_20250825", tool_id: "srvtoolu_1" } }).key).not.toBe(next(toolUse).key);
  });

  it("Should serve the caller back on a hit, JSON and streamed", () => {
    const recorded = streamed({ caller })!;
    const answer = anthropicAnswerOf(stored(recorded.answer.json, recorded.answer.hash));
    expect(answer).not.toBeNull();
    const ctx = { model: "claude-x", id: "msg_served", inputTokens: 5 };
    const served = renderMessage(answer!, ctx as Parameters<typeof renderMessage>[1]) as { content: Array<Record<string, unknown>> };
    expect(served.content[1]).toMatchObject({ type: "tool_use", name: "get_order", input: { order_id: "A-1" }, caller });
    const events = renderEventStream(answer!, ctx as Parameters<typeof renderEventStream>[1]);
    expect(events).toContain('"caller":{"type":"direct"}');
  });

  it("Should still not record a stream whose call a server tool made, whose block starts with its input whole, or whose text streams citations", () => {
    expect(streamed({ caller: { type: "code_execution_20250825", tool_id: "srvtoolu_1" } })).toBeNull();
    expect(
      reader().fromJson(
        JSON.stringify({ ...message, content: [message.content[0], { ...toolUse, caller: { type: "code_execution_20250825", tool_id: "srvtoolu_1" } }] }),
        1,
      ),
    ).toBeNull();
    expect(streamed({ input: { order_id: "A-1" } })).toBeNull();
    const citing = stream({}).replace('{"type":"text_delta","text":"Let me look."}', '{"type":"citations_delta","citation":{"type":"char_location"}}');
    const s = reader().stream();
    s.feed(new TextEncoder().encode(citing));
    expect(s.finish(1)).toBeNull();
  });
});

describe("a streamed Messages answer is recorded only as the model sent it", () => {
  const assembled = (block: Record<string, unknown>) => {
    const events = [
      { type: "message_start", message: { usage: { input_tokens: 1, output_tokens: 0 } } },
      { type: "content_block_start", index: 0, content_block: block },
      { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: '{"a":1}' } },
      { type: "content_block_stop", index: 0 },
      { type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 3 } },
      { type: "message_stop" },
    ];
    const assembler = new AnthropicSseAssembler();
    assembler.feed(new TextEncoder().encode(events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join("")));
    return assembler.result();
  };

  it("Should keep a tool_use start's other fields as sent (never drop them), and not assemble an input sent whole", () => {
    expect(assembled({ type: "tool_use", id: "toolu_1", name: "f", input: {} })?.message.content).toEqual([
      { type: "tool_use", id: "toolu_1", name: "f", input: { a: 1 } },
    ]);
    // Kept, so the answer is judged as its JSON form is: a server tool's caller is not recorded
    // (keyAnthropicAnswer; test/unit/anthropic-stream-fields.test.ts), the default caller is.
    const serverCaller = { type: "code_execution_20250825", tool_id: "srvtoolu_1" };
    expect(assembled({ type: "tool_use", id: "toolu_1", name: "f", input: {}, caller: serverCaller })?.message.content).toEqual([
      { type: "tool_use", id: "toolu_1", name: "f", input: { a: 1 }, caller: serverCaller },
    ]);
    expect(assembled({ type: "tool_use", id: "toolu_1", name: "f", input: { b: 2 } })).toBeNull();
  });
});
