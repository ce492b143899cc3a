import { describe, expect, it } from "vitest";
import { anthropicAnswerOf, renderEventStream, renderMessage } from "../../src/providers/anthropic/render";
import type { StoredAnswer } from "../../src/core/answer";
import { messagesAdapter } from "../../src/providers/anthropic/adapter";

/**
 * What a Messages answer carried around its content is stored beside it (src/providers/anthropic/envelope.ts) and
 * served back, but never in place of what a hit renders itself: an import may store any object there, and
 * its `content`, `id`, stop reason or token counts must not reach a served message. A stream whose events
 * JSON.parse would change (a number a double cannot hold) is not recorded: its fields are kept as sent.
 */

const body = messagesAdapter.schema.parse({ model: "claude-x", max_tokens: 64, messages: [{ role: "user", content: "Refund order A-1." }] });
const request = { body, raw: JSON.stringify(body), url: new URL("http://mm.test/v1/messages"), headers: new Headers({ "anthropic-version": "2023-06-01" }) };
const keyed = messagesAdapter.key(request, { tenant: "t", namespace: "default", maxMessageBytes: 900_000 });
if (!keyed.ok) throw new Error(JSON.stringify(keyed));

function stored(message: Record<string, unknown>): StoredAnswer {
  return {
    hash: "a".repeat(32),
    message: message as StoredAnswer["message"],
    observations: 1,
    finishReason: "end_turn",
    promptTokens: 7,
    completionTokens: 3,
    latencyMs: 1,
  };
}

const content = [{ type: "text", text: "Refunded." }];
const ctx = { id: "msg_mmX", model: "claude-x" };

describe("Anthropic envelope", () => {
  it("Should never let stored fields replace the id, content, stop or counts a hit renders (JSON and streamed)", () => {
    const hostile = {
      id: "msg_old",
      type: "other",
      content: [{ type: "text", text: "forged" }],
      stop_reason: "refusal",
      stop_details: null,
      usage: { input_tokens: 999, output_tokens: 999, cache_read_input_tokens: 5, service_tier: "priority" },
    };
    const answer = anthropicAnswerOf(
      stored({
        role: "assistant",
        content,
        "muscle-mem:response": hostile,
        "muscle-mem:delta": { type: "x", delta: { stop_reason: "refusal", stop_details: null }, usage: { input_tokens: 999 } },
      }),
    );
    if (!answer) throw new Error("not an answer");
    const message = renderMessage(answer, ctx);
    expect(message).toEqual({
      id: "msg_mmX",
      type: "message",
      role: "assistant",
      model: "claude-x",
      content,
      stop_reason: "end_turn",
      stop_sequence: null,
      stop_details: null,
      usage: { input_tokens: 7, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 3, service_tier: "priority" },
    });
    const events = renderEventStream(answer, ctx)
      .split("\n\n")
      .filter((block) => block.includes("data: "))
      .map((block) => JSON.parse(block.slice(block.indexOf("data: ") + 6)) as Record<string, unknown>);
    expect(events[0]).toMatchObject({
      type: "message_start",
      message: { id: "msg_mmX", type: "message", content: [], stop_reason: null, usage: { input_tokens: 7, cache_read_input_tokens: 0 } },
    });
    expect(events.at(-2)).toEqual({
      type: "message_delta",
      delta: { stop_reason: "end_turn", stop_sequence: null, stop_details: null },
      usage: { input_tokens: 7, output_tokens: 3 },
    });
  });

  it("Should not record a stream whose message_start has a number JSON.parse would change", () => {
    const events = [
      {
        type: "message_start",
        message: {
          id: "m",
          type: "message",
          role: "assistant",
          model: "claude-x",
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 5, output_tokens: 1 },
        },
      },
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Refunded." } },
      { type: "content_block_stop", index: 0 },
      { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 3 } },
      { type: "message_stop" },
    ];
    const text = (big: boolean) =>
      events
        .map(
          (e) =>
            `event: ${e.type}\ndata: ${JSON.stringify(e).replace('"input_tokens":5', big ? '"input_tokens":5,"x":123456789012345678901' : '"input_tokens":5')}\n\n`,
        )
        .join("");
    const recording = (big: boolean) => {
      const s = messagesAdapter.reader(keyed.key, request).stream();
      s.feed(new TextEncoder().encode(text(big)));
      return s.finish(1);
    };
    expect(recording(false)).not.toBeNull();
    expect(recording(true)).toBeNull();
  });
});
