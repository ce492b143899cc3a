import type Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { api, importFor } from "./api-helpers";
import { anthropicClient, postMessages, sdkRecorded } from "./messages.support";
import { withUpstream } from "./upstream-stub";

/**
 * The Messages envelope (src/providers/anthropic/envelope.ts: the message's fields around its content,
 * stored under muscle-mem:response and, streamed, muscle-mem:delta, outside the hash). An import stores any
 * object there; what a hit serves from it must never contradict the recorded answer or hand the agent a
 * wrong type where the SDK promises a number.
 */

type Fields = Record<string, unknown>;

const key = () => `sk-ant-rv2-${crypto.randomUUID()}`;
const model = () => `claude-rv2-${crypto.randomUUID().slice(0, 8)}`;
const ndjson = { "content-type": "application/x-ndjson" };
const user: Anthropic.MessageParam = { role: "user", content: "Refund order A-1." };

function lineOf(m: string, around: Fields): Fields {
  return {
    model: m,
    params: { "muscle-mem:api": "anthropic", max_tokens: 64 },
    messages: [user, { role: "assistant", content: [{ type: "text", text: "Order A-1 is refunded." }], ...around }],
  };
}

async function importLine(k: string, line: Fields): Promise<Response> {
  return importFor(k, { body: JSON.stringify(line), headers: ndjson });
}

function eventsOf(text: string): Array<Fields & { type: string }> {
  return text
    .split("\n\n")
    .map((block) => block.split("\n").find((l) => l.startsWith("data: ")))
    .filter((l): l is string => l !== undefined)
    .map((l) => JSON.parse(l.slice(6)) as Fields & { type: string });
}

describe("an imported Messages envelope", () => {
  it("Should serve token counts as numbers (or null) in a streamed hit's message_delta whatever the imported muscle-mem:delta holds", async () => {
    const k = key();
    const m = model();
    const around = {
      "muscle-mem:response": { stop_details: null, usage: { service_tier: "standard" } },
      "muscle-mem:delta": {
        delta: { stop_details: null },
        usage: { input_tokens: "x", cache_creation_input_tokens: { n: 1 }, cache_read_input_tokens: "7", output_tokens: "y", server_tool_use: null },
      },
    };
    expect((await importLine(k, lineOf(m, around))).status).toBe(200);
    const body: Anthropic.MessageCreateParamsNonStreaming = { model: m, max_tokens: 64, messages: [user] };
    const res = await postMessages({ ...body, stream: true }, { key: k });
    expect(res.headers.get("muscle-mem-cache")).toBe("hit");
    const delta = eventsOf(await res.text()).find((e) => e.type === "message_delta") as unknown as { usage: Fields };
    for (const name of ["input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens"]) {
      const value = delta.usage[name];
      expect(value === null || value === undefined || typeof value === "number", `${name}: ${JSON.stringify(value)}`).toBe(true);
    }
    // Through the SDK, which copies each non-null count of message_delta onto the message.
    const streamed = await anthropicClient(k).messages.stream(body).finalMessage();
    for (const value of Object.values({
      a: streamed.usage.input_tokens,
      b: streamed.usage.output_tokens,
      c: streamed.usage.cache_read_input_tokens,
      d: streamed.usage.cache_creation_input_tokens,
    })) {
      expect(value === null || typeof value === "number").toBe(true);
    }
  });

  it("Should not serve stop_details that name another stop than the answer's (JSON and streamed)", async () => {
    const k = key();
    const m = model();
    const refusal = { type: "refusal", category: "cyber", explanation: "Imported." };
    const around = {
      "muscle-mem:response": { stop_details: null, container: null },
      "muscle-mem:delta": { delta: { stop_details: refusal }, usage: {} },
    };
    expect((await importLine(k, lineOf(m, around))).status).toBe(200);
    const body: Anthropic.MessageCreateParamsNonStreaming = { model: m, max_tokens: 64, messages: [user] };
    const client = anthropicClient(k);
    const json = await client.messages.create(body);
    expect(json.stop_reason).toBe("end_turn");
    expect(json.stop_details).toBeNull();
    const streamed = await client.messages.stream(body).finalMessage();
    expect(streamed.stop_reason).toBe("end_turn");
    expect(streamed.stop_details ?? null).toBeNull();

    // Recorded from JSON (no muscle-mem:delta): the same.
    const k2 = key();
    expect((await importLine(k2, lineOf(m, { "muscle-mem:response": { stop_details: refusal } }))).status).toBe(200);
    const client2 = anthropicClient(k2);
    expect((await client2.messages.create(body)).stop_details).toBeNull();
    expect((await client2.messages.stream(body).finalMessage()).stop_details ?? null).toBeNull();
  });

  it("Should refuse an import whose answer sets a container or context edits, which a recording never keeps", async () => {
    const m = model();
    const container = { id: "container_011CRecordingAccount", expires_at: "2026-11-26T15:00:00Z" };
    const lines: Fields[] = [
      lineOf(m, { "muscle-mem:response": { container } }),
      lineOf(m, { "muscle-mem:response": { container: null }, "muscle-mem:delta": { delta: { container }, usage: {} } }),
      lineOf(m, { "muscle-mem:response": { context_management: { applied_edits: [{ type: "clear_tool_uses_20250919" }] } } }),
      lineOf(m, { "muscle-mem:response": {}, "muscle-mem:delta": { context_management: { applied_edits: [] }, delta: {}, usage: {} } }),
    ];
    for (const line of lines) {
      const k = key();
      const res = await importLine(k, line);
      expect(res.status, JSON.stringify(line.messages)).toBe(400);
      const hit = await postMessages({ model: m, max_tokens: 64, messages: [user] }, { key: k, headers: { "cache-control": "only-if-cached" } });
      expect(hit.status).toBe(504);
    }
  });
});

describe("the SDK's view of a hit of an answer recorded without the envelope fields", () => {
  it("Should assemble the miss's message from a hit, JSON and streamed, when the API sent no stop_details, container or usage extras", async () => {
    const k = key();
    const m = model();
    const bare = {
      id: "msg_up",
      type: "message",
      role: "assistant",
      model: m,
      content: [{ type: "text", text: "Order A-1 is refunded." }],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 7 },
    };
    const params: Anthropic.MessageCreateParamsNonStreaming = { model: m, max_tokens: 64, messages: [user] };
    const client = anthropicClient(k);
    const miss = await withUpstream({ json: bare }, () => client.messages.create(params));
    await sdkRecorded(client, params);
    const strip = (msg: Anthropic.Message) => {
      const { id: _id, parsed_output: _p, ...rest } = msg as Anthropic.Message & { parsed_output?: unknown };
      return rest;
    };
    const hit = strip(await client.messages.create(params));
    const streamed = strip(await client.messages.stream(params).finalMessage());
    expect(hit).toEqual({ ...strip(miss), usage: { input_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 7 } });
    expect(Object.keys(hit)).not.toContain("stop_details");
    expect(streamed.stop_details).toBeUndefined();
    expect(streamed.content).toEqual(hit.content);
  });
});
