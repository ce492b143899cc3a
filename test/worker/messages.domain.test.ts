import { describe, expect, it } from "vitest";
import { canonicalAnthropicConversation } from "../../src/providers/anthropic/canonical";
import { keyAnthropicAnswer, keyMessagesRequest } from "../../src/providers/anthropic/key";
import { renderEventStream, renderMessage, type AnthropicAnswer } from "../../src/providers/anthropic/render";
import { messagesRequest, type MessagesRequest } from "../../src/providers/anthropic/schema";
import { AnthropicSseAssembler } from "../../src/providers/anthropic/sse-assembler";
import { decodeStop, encodeStop } from "../../src/providers/anthropic/stop";
import { keyRequest } from "../../src/providers/chat/key";

const request = (extra: Record<string, unknown> = {}): MessagesRequest =>
  messagesRequest.parse({ model: "claude-x", max_tokens: 100, messages: [{ role: "user", content: "Refund #A-1" }], ...extra });

const headers = (init: Record<string, string> = {}) => new Headers({ "anthropic-version": "2023-06-01", ...init });

function keyed(body: MessagesRequest, h = headers()) {
  const result = keyMessagesRequest(body, h, "tenant", "default");
  if (!result.ok) throw new Error(JSON.stringify(result));
  return result.key;
}

describe("Anthropic canonical form", () => {
  it("Should treat string content, text blocks, cache_control and empty text alike", () => {
    const a = canonicalAnthropicConversation([{ role: "user", content: "hi" }]);
    const b = canonicalAnthropicConversation([
      {
        role: "user",
        content: [
          { type: "text", text: "hi", cache_control: { type: "ephemeral" } },
          { type: "text", text: "" },
        ],
      },
    ]);
    expect(a.ok && b.ok && a.messages).toEqual(b.ok && b.messages);
  });

  it("Should number tool_use ids in order and map tool results to them", () => {
    const result = canonicalAnthropicConversation([
      { role: "user", content: "go" },
      {
        role: "assistant",
        content: [
          { type: "tool_use", id: "toolu_zz", name: "a", input: { y: 1, x: 2 } },
          { type: "tool_use", id: "toolu_aa", name: "b", input: {} },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_aa", content: [{ type: "text", text: "B" }] },
          { type: "tool_result", tool_use_id: "toolu_zz", content: "A", is_error: true },
        ],
      },
    ]);
    expect(result.ok && result.messages.slice(1)).toEqual([
      {
        role: "assistant",
        content: [
          { type: "tool_use", id: "toolu_0", name: "a", input: { y: 1, x: 2 } },
          { type: "tool_use", id: "toolu_1", name: "b", input: {} },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text", text: "B" }] },
          { type: "tool_result", tool_use_id: "toolu_0", content: [{ type: "text", text: "A" }], is_error: true },
        ],
      },
    ]);
  });

  it("Should call a tool_result without its tool_use, and an image, uncacheable", () => {
    const orphan = canonicalAnthropicConversation([{ role: "user", content: [{ type: "tool_result", tool_use_id: "nope", content: "x" }] }]);
    expect(!orphan.ok && orphan.error.kind).toBe("uncacheable");
    const image = canonicalAnthropicConversation([{ role: "user", content: [{ type: "image", source: {} }] }]);
    expect(!image.ok && image.error).toEqual({ kind: "uncacheable", reason: "image content block" });
  });
});

describe("Anthropic keys", () => {
  it("Should put system forms and cache_control in one tree, anthropic-beta in another, anthropic-version in the same", () => {
    const base = keyed(request({ system: "Be brief." }));
    expect(
      keyed(request({ system: [{ type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } }], metadata: { user_id: "u" }, stream: true })).key,
    ).toBe(base.key);
    expect(keyed(request({ system: "Be brief." }), headers({ "anthropic-version": "2099-01-01" })).key).toBe(base.key);
    expect(keyed(request({ system: "Be brief." }), headers({ "anthropic-beta": "x-2025" })).key).not.toBe(base.key);
    expect(keyed(request({ system: "Be brief.", temperature: 0 })).key).not.toBe(base.key);
  });

  it("Should never share a tree with an OpenAI request", () => {
    const anthropic = keyed(request());
    const openai = keyRequest({ model: "claude-x", max_tokens: 100, messages: [{ role: "user", content: "Refund #A-1" }] }, "tenant", "default");
    expect(openai.ok && openai.key.treeId).not.toBe(anthropic.treeId);
    expect(JSON.parse(anthropic.frameJson)).toMatchObject({ "muscle-mem:api": "anthropic" });
  });

  it("Should bypass a message or a system prompt over MAX_CACHEABLE_MESSAGE_BYTES, counting UTF-8 bytes", () => {
    const long = request({ messages: [{ role: "user", content: "é".repeat(600) }] });
    expect(keyMessagesRequest(long, headers(), "t", "d", 1_000)).toEqual({ ok: false, bypass: "message too large" });
    expect(keyMessagesRequest(long, headers(), "t", "d", 10_000).ok).toBe(true);
    expect(keyMessagesRequest(request({ system: "x".repeat(2_000) }), headers(), "t", "d", 1_000)).toEqual({ ok: false, bypass: "frame too large" });
  });

  it("Should key the thinking configuration and bypass server-side state", () => {
    const enabled = keyed(request({ thinking: { type: "enabled", budget_tokens: 2000 } }));
    const budget = keyed(request({ thinking: { type: "enabled", budget_tokens: 4000 } }));
    const adaptive = keyed(request({ thinking: { type: "adaptive" } }));
    expect(new Set([enabled.treeId, budget.treeId, adaptive.treeId, keyed(request()).treeId]).size).toBe(4);
    expect(keyMessagesRequest(request({ thread: { type: "create" } }), headers(), "t", "d")).toEqual({ ok: false, bypass: "server-side thread" });
    expect(keyMessagesRequest(request({ container: "cntr_1" }), headers(), "t", "d")).toEqual({ ok: false, bypass: "server-side container" });
    expect(keyMessagesRequest(request({ thinking: { type: "disabled" } }), headers(), "t", "d").ok).toBe(true);
  });

  it("Should find a recorded answer on the path of the next request that echoes it with other ids", () => {
    const key = keyed(request());
    const answer = keyAnthropicAnswer(key, {
      role: "assistant",
      content: [
        { type: "text", text: "Looking." },
        { type: "tool_use", id: "toolu_model", name: "get", input: { b: 1, a: 2 } },
      ],
    });
    const echoed = keyed(
      request({
        messages: [
          { role: "user", content: "Refund #A-1" },
          {
            role: "assistant",
            content: [
              { type: "text", text: "Looking." },
              { type: "tool_use", id: "toolu_served", name: "get", input: { a: 2, b: 1 } },
            ],
          },
          { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_served", content: "{}" }] },
        ],
      }),
    );
    expect(echoed.path[1].hash).toBe(answer?.hash);
    expect(echoed.path[1].parent).toBe(key.key);
  });

  it("Should record an empty answer (Claude may end a turn with no content), thinking as sent, and refuse other blocks", () => {
    const key = keyed(request());
    expect(keyAnthropicAnswer(key, { role: "assistant", content: [] })?.message).toEqual({ role: "assistant", content: [] });
    const thinking = { type: "thinking", thinking: "hm", signature: "s" };
    const redacted = { type: "redacted_thinking", data: "EmwKAh" };
    expect(keyAnthropicAnswer(key, { role: "assistant", content: [thinking, redacted, { type: "text", text: "ok" }] })?.message).toEqual({
      role: "assistant",
      content: [thinking, redacted, { type: "text", text: "ok" }],
    });
    expect(keyAnthropicAnswer(key, { role: "assistant", content: [{ type: "web_search_tool_result", tool_use_id: "x", content: [] }] })).toBeNull();
  });
});

const answer: AnthropicAnswer = {
  hash: "f".repeat(32),
  message: {
    role: "assistant",
    content: [
      { type: "text", text: "Refunding ✓ now." },
      { type: "tool_use", id: "toolu_0", name: "refund", input: { amount: 4.5, order_id: "A-1" } },
    ],
  },
  finishReason: "tool_use",
  promptTokens: 12,
  completionTokens: 7,
};

describe("Anthropic rendering", () => {
  it("Should render a message with fresh tool ids, stop reason and usage", () => {
    const message = renderMessage(answer, { id: "msg_1", model: "claude-x" });
    expect(message).toMatchObject({ id: "msg_1", type: "message", role: "assistant", model: "claude-x", stop_reason: "tool_use", stop_sequence: null });
    expect(message.usage).toMatchObject({ input_tokens: 12, output_tokens: 7 });
    const content = message.content as Array<{ type: string; id?: string }>;
    expect(content[1].id).toMatch(/^toolu_mm/);
  });

  it("Should assemble its own event stream back into the same message, however the bytes are cut", () => {
    const bytes = new TextEncoder().encode(renderEventStream(answer, { id: "msg_1", model: "claude-x" }));
    const rendered = renderMessage(answer, { id: "msg_1", model: "claude-x" });
    for (const cut of [1, 5, 64, bytes.length]) {
      const assembler = new AnthropicSseAssembler();
      for (let i = 0; i < bytes.length; i += cut) assembler.feed(bytes.slice(i, i + cut));
      const result = assembler.result();
      expect(result?.message.content).toEqual(rendered.content);
      expect(result?.stopReason).toBe("tool_use");
      expect(result?.usage).toEqual({ input_tokens: 12, output_tokens: 7 });
    }
  });

  it("Should assemble nothing from a stream without message_stop or with an error event", () => {
    const full = renderEventStream(answer, { id: "msg_1", model: "claude-x" });
    const truncated = new AnthropicSseAssembler();
    truncated.feed(new TextEncoder().encode(full.slice(0, full.indexOf("event: message_stop"))));
    expect(truncated.result()).toBeNull();
    const failed = new AnthropicSseAssembler();
    const at = full.indexOf("event: message_delta");
    failed.feed(new TextEncoder().encode(`${full.slice(0, at)}event: error\ndata: {"type":"error","error":{"type":"overloaded_error"}}\n\n${full.slice(at)}`));
    expect(failed.result()).toBeNull();
  });

  it("Should keep the matched stop sequence and refuse unfinished stop reasons", () => {
    expect(decodeStop(encodeStop("stop_sequence", "\n\nHuman:") ?? "")).toEqual({ stop_reason: "stop_sequence", stop_sequence: "\n\nHuman:" });
    expect(decodeStop(encodeStop("end_turn", null) ?? "")).toEqual({ stop_reason: "end_turn", stop_sequence: null });
    expect(encodeStop("pause_turn", null)).toBeNull();
    expect(encodeStop("refusal", null)).toBeNull();
  });
});
