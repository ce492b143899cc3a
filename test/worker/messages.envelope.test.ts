import type Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { api, ok, type Tree, importFor } from "./api-helpers";
import { anthropicClient, postMessages, sdkRecorded } from "./messages.support";
import { withUpstream } from "./upstream-stub";

/**
 * Around its content, a message carries top-level fields (`stop_details`, `container`, `diagnostics`: null
 * when unused, and whatever the API adds) and usage fields that are not token counts (`cache_creation`,
 * `service_tier`, `inference_geo`, `speed`, `server_tool_use`, `output_tokens_details`). A hit serves them as
 * the model sent them, JSON and streamed (in `message_start` and `message_delta` as the recorded stream put
 * them), with its own id and the hit's counts: the recorded input and output tokens, and no prompt cache read
 * or written (cache counts 0). Before, a hit left them out: the SDK saw `undefined` where the miss had `null`.
 */

const key = () => `sk-ant-envelope-${crypto.randomUUID()}`;
const model = () => `claude-envelope-${crypto.randomUUID().slice(0, 8)}`;

const usage = {
  input_tokens: 10,
  cache_creation_input_tokens: 4,
  cache_read_input_tokens: 6,
  cache_creation: { ephemeral_5m_input_tokens: 4, ephemeral_1h_input_tokens: 0 },
  output_tokens: 12,
  service_tier: "standard",
  inference_geo: "us",
  speed: "standard",
  server_tool_use: null,
  output_tokens_details: { thinking_tokens: 0 },
};

function messageOf(m: string) {
  return {
    id: "msg_upstream",
    type: "message",
    role: "assistant",
    model: m,
    content: [{ type: "text", text: "Order A-1 is refunded." }],
    stop_reason: "end_turn",
    stop_sequence: null,
    stop_details: null,
    container: null,
    diagnostics: null,
    usage,
  };
}

/** The recorded stream: message fields and usage in `message_start`, stop fields and cumulative usage in `message_delta`. */
function streamEvents(m: string): Array<Record<string, unknown>> {
  const { content: _c, stop_reason: _r, ...rest } = messageOf(m);
  return [
    { type: "message_start", message: { ...rest, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } },
    { type: "ping" },
    { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
    { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Order A-1 is refunded." } },
    { type: "content_block_stop", index: 0 },
    {
      type: "message_delta",
      delta: { stop_reason: "end_turn", stop_sequence: null, stop_details: null, container: null },
      usage: {
        input_tokens: 10,
        cache_creation_input_tokens: 4,
        cache_read_input_tokens: 6,
        output_tokens: 12,
        server_tool_use: null,
        output_tokens_details: { thinking_tokens: 0 },
      },
    },
    { type: "message_stop" },
  ];
}

const sse = (events: Array<Record<string, unknown>>) => events.map((e) => `event: ${e.type as string}\ndata: ${JSON.stringify(e)}\n\n`).join("");

/** The message as a hit serves it: the miss with its own id, no prompt cache read or written. */
function expectedHit(miss: Anthropic.Message): unknown {
  const { parsed_output: _sdk, ...rest } = miss as Anthropic.Message & { parsed_output?: unknown };
  return {
    ...rest,
    id: expect.stringMatching(/^msg_mm/),
    usage: {
      ...miss.usage,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
    },
  };
}

const withoutSdk = (message: Anthropic.Message) => {
  const { parsed_output: _sdk, ...rest } = message as Anthropic.Message & { parsed_output?: unknown };
  return rest;
};

async function record(k: string, m: string, streamed: boolean) {
  const outcomes: string[] = [];
  const client = anthropicClient(k, outcomes);
  const params: Anthropic.MessageCreateParamsNonStreaming = { model: m, max_tokens: 64, messages: [{ role: "user", content: "Refund order A-1." }] };
  const reply = streamed ? { text: sse(streamEvents(m)), contentType: "text/event-stream" } : { json: messageOf(m) };
  const miss = await withUpstream(reply, async () => (streamed ? await client.messages.stream(params).finalMessage() : await client.messages.create(params)));
  await sdkRecorded(client, params);
  return { client, params, miss, outcomes };
}

describe("Anthropic hits serve the message's top-level and usage fields", () => {
  for (const streamed of [false, true]) {
    const how = streamed ? "streamed" : "JSON";

    it(`Should serve stop_details, container, diagnostics and usage's other fields, JSON and streamed (recorded from ${how})`, async () => {
      const m = model();
      const { client, params, miss, outcomes } = await record(key(), m, streamed);
      expect(miss.stop_details).toBeNull();
      const hit = await client.messages.create(params);
      const streamedHit = await client.messages.stream(params).finalMessage();
      expect(outcomes).toEqual(["miss", "hit", "hit"]);
      expect(withoutSdk(hit)).toEqual(expectedHit(miss));
      expect(withoutSdk(streamedHit)).toEqual(expectedHit(miss));
    });
  }

  it("Should put the fields in message_start and message_delta where the recorded stream carried them", async () => {
    const k = key();
    const m = model();
    const { params } = await record(k, m, true);
    const res = await postMessages({ ...params, stream: true }, { key: k });
    expect(res.headers.get("muscle-mem-cache")).toBe("hit");
    const events = (await res.text())
      .split("\n\n")
      .map((block) => block.split("\n").find((line) => line.startsWith("data: ")))
      .filter((line): line is string => line !== undefined)
      .map((line) => JSON.parse(line.slice(6)) as Record<string, unknown> & { type: string });
    const recorded = streamEvents(m);
    const start = events.find((e) => e.type === "message_start") as unknown as { message: Record<string, unknown> & { usage: Record<string, unknown> } };
    const recordedStart = recorded[0].message as Record<string, unknown> & { usage: Record<string, unknown> };
    expect(start.message).toEqual({
      ...recordedStart,
      id: expect.stringMatching(/^msg_mm/),
      usage: {
        ...recordedStart.usage,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
      },
    });
    const delta = events.find((e) => e.type === "message_delta");
    const recordedDelta = recorded.find((e) => e.type === "message_delta") as { usage: Record<string, unknown> };
    expect(delta).toEqual({ ...recordedDelta, usage: { ...recordedDelta.usage, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } });
  });

  it("Should carry the fields through an export and an import into another tenant", async () => {
    const k = key();
    const m = model();
    const { client, params } = await record(k, m, false);
    const served = withoutSdk(await client.messages.create(params));
    const trees = await ok<{ data: Tree[] }>(api("/trees", { token: k }));
    const jsonl = await (await api(`/trees/${trees.data[0].id}/export`, { token: k })).text();
    const other = key();
    expect(await ok(importFor(other, { body: jsonl, headers: { "content-type": "application/x-ndjson" } }))).toMatchObject({ answers: 1 });
    const outcomes: string[] = [];
    const imported = withoutSdk(await anthropicClient(other, outcomes).messages.create(params));
    expect(outcomes).toEqual(["hit"]);
    // Token counts of an imported answer are estimated (an Anthropic line carries none); every other field is the recording's.
    const { usage: servedUsage, id: _a, ...servedRest } = served;
    const { usage: importedUsage, id: _b, ...importedRest } = imported;
    expect(importedRest).toEqual(servedRest);
    expect(importedRest).toMatchObject({ stop_details: null, container: null, diagnostics: null });
    expect({ ...importedUsage, input_tokens: 0, output_tokens: 0 }).toEqual({ ...servedUsage, input_tokens: 0, output_tokens: 0 });
    expect(importedUsage).toMatchObject({ service_tier: "standard", inference_geo: "us", speed: "standard", output_tokens_details: { thinking_tokens: 0 } });
    // Only a recorded answer carries them, as an object: any other line is a 400.
    const line = JSON.parse(jsonl.trim()) as { messages: Array<Record<string, unknown>> };
    const onUser = { ...line, messages: [{ ...line.messages[0], "muscle-mem:response": {} }, line.messages[1]] };
    const notObject = { ...line, messages: [line.messages[0], { ...line.messages[1], "muscle-mem:response": "x" }] };
    for (const bad of [onUser, notObject])
      expect((await importFor(key(), { body: JSON.stringify(bad), headers: { "content-type": "application/x-ndjson" } })).status).toBe(400);
  });
});
