import type Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { anthropicClient, sdkRecorded } from "./messages.support";
import { withUpstream } from "./upstream-stub";

/**
 * A hit is the recorded message as the official client received it from the model, ids aside (the message
 * id and each tool_use id are the hit's own). Each case records an answer from a stubbed upstream, JSON or
 * streamed, and compares what `@anthropic-ai/sdk` makes of the miss with what it makes of a JSON and a
 * streamed hit.
 */

const key = () => `sk-ant-fidelity-${crypto.randomUUID()}`;
const model = () => `claude-fidelity-${crypto.randomUUID().slice(0, 8)}`;

type Block = Record<string, unknown> & { type: string };

/** The message as the API sends it, its model the request's (a hit names the request's model). */
function messageOf(
  m: string,
  content: Block[],
  stop = "tool_use",
  usage: Record<string, unknown> = { input_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 12 },
) {
  return { id: "msg_upstream", type: "message", role: "assistant", model: m, content, stop_reason: stop, stop_sequence: null, usage };
}

/** The event stream of `message`, each block's text and input in one delta. */
function eventsOf(message: ReturnType<typeof messageOf>): string {
  const { content, stop_reason, stop_sequence, usage, ...rest } = message;
  const events: Array<Record<string, unknown>> = [
    { type: "message_start", message: { ...rest, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } },
  ];
  content.forEach((block, index) => {
    if (block.type === "text") {
      const { text, ...start } = block;
      events.push({ type: "content_block_start", index, content_block: { ...start, text: "" } });
      if (text !== "") events.push({ type: "content_block_delta", index, delta: { type: "text_delta", text } });
    } else {
      events.push({ type: "content_block_start", index, content_block: { ...block, input: {} } });
      events.push({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) } });
    }
    events.push({ type: "content_block_stop", index });
  });
  events.push({ type: "message_delta", delta: { stop_reason, stop_sequence }, usage: { output_tokens: usage.output_tokens } });
  events.push({ type: "message_stop" });
  return events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join("");
}

/**
 * The message without what a hit renews: its id and its tool_use ids (replaced by their order); and without
 * `parsed_output`, which the SDK's stream helper adds to every streamed message (structured outputs).
 */
function comparable(message: Anthropic.Message): unknown {
  let calls = 0;
  const content = message.content.map((block) => (block.type === "tool_use" ? { ...block, id: `call ${calls++}` } : block));
  const { parsed_output: _sdk, ...rest } = message as Anthropic.Message & { parsed_output?: unknown };
  return { ...rest, id: "renewed", content };
}

/** What the SDK made of the miss, and of a JSON and a streamed hit, for an upstream answering `message` (JSON or streamed). */
async function missAndHits(message: ReturnType<typeof messageOf>, streamed: boolean) {
  const outcomes: string[] = [];
  const client = anthropicClient(key(), outcomes);
  const params: Anthropic.MessageCreateParamsNonStreaming = {
    model: message.model,
    max_tokens: 64,
    messages: [{ role: "user", content: "Refund order A-1." }],
  };
  const reply = streamed ? { text: eventsOf(message), contentType: "text/event-stream" } : { json: message };
  const miss: Anthropic.Message = await withUpstream(reply, async () =>
    streamed ? await client.messages.stream(params).finalMessage() : await client.messages.create(params),
  );
  await sdkRecorded(client, params);
  const hit = await client.messages.create(params);
  const streamedHit = await client.messages.stream(params).finalMessage();
  // (sdkRecorded asks with a client of its own: its only-if-cached probes are not among these outcomes)
  expect(outcomes).toEqual(["miss", "hit", "hit"]);
  return { miss: comparable(miss), hit: comparable(hit), streamedHit: comparable(streamedHit) };
}

const call: Block = { type: "tool_use", id: "toolu_up", name: "get_order", input: { order_id: "A-1" } };

describe("Anthropic replay fidelity", () => {
  for (const streamed of [false, true]) {
    const how = streamed ? "streamed" : "JSON";

    it(`Should serve an empty text block the model sent before a tool call (recorded from ${how})`, async () => {
      const m = model();
      const { miss, hit, streamedHit } = await missAndHits(messageOf(m, [{ type: "text", text: "" }, call]), streamed);
      expect(hit).toEqual(miss);
      expect(streamedHit).toEqual(miss);
    });
  }
});
