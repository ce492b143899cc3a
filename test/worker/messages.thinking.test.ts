import { env } from "cloudflare:workers";
import Anthropic from "@anthropic-ai/sdk";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { anthropicClient, sdkRecorded } from "./messages.support";

type Block = Record<string, unknown>;
let asked = 0;
const THINKING = { type: "thinking", thinking: "The order was delivered, so look it up first.", signature: "EqQBCkYIBxgCKkBsig==" };
const REDACTED = { type: "redacted_thinking", data: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP" };

/** The model's blocks: thinking first (and redacted thinking), then a tool call or, once its result is back, the answer. */
function answerTo(body: { messages: Array<{ content: unknown }> }): Block[] {
  const last = body.messages[body.messages.length - 1].content;
  const resulted = Array.isArray(last) && (last as Block[]).some((b) => b.type === "tool_result");
  if (resulted) return [THINKING, { type: "text", text: "Refunded A-1." }];
  return [THINKING, REDACTED, { type: "tool_use", id: `toolu_up${asked}`, name: "get_order", input: { order_id: "A-1" } }];
}

/** Anthropic's event stream for `content`, thinking streamed as the API streams it. */
function events(model: string, content: Block[]): string {
  const send = (type: string, data: Block) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  let out = send("message_start", {
    message: {
      id: "msg_up",
      type: "message",
      role: "assistant",
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 9, output_tokens: 1 },
    },
  });
  content.forEach((block, index) => {
    if (block.type === "thinking") {
      out += send("content_block_start", { index, content_block: { type: "thinking", thinking: "", signature: "" } });
      const text = block.thinking as string;
      out += send("content_block_delta", { index, delta: { type: "thinking_delta", thinking: text.slice(0, 10) } });
      out += send("content_block_delta", { index, delta: { type: "thinking_delta", thinking: text.slice(10) } });
      out += send("content_block_delta", { index, delta: { type: "signature_delta", signature: block.signature } });
    } else if (block.type === "redacted_thinking") {
      out += send("content_block_start", { index, content_block: block });
    } else if (block.type === "text") {
      out += send("content_block_start", { index, content_block: { type: "text", text: "" } });
      out += send("content_block_delta", { index, delta: { type: "text_delta", text: block.text } });
    } else {
      out += send("content_block_start", { index, content_block: { ...block, input: {} } });
      out += send("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) } });
    }
    out += send("content_block_stop", { index });
  });
  const stop = content.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn";
  return out + send("message_delta", { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 20 } }) + send("message_stop", {});
}

beforeEach(() => {
  asked = 0;
  const upstream = new URL((env as unknown as { ANTHROPIC_BASE_URL: string }).ANTHROPIC_BASE_URL).origin;
  const real = globalThis.fetch;
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    if (new URL(request.url).origin !== upstream || !request.url.endsWith("/messages")) return real(input, init);
    const body = (await request.json()) as { model: string; stream?: boolean; messages: Array<{ content: unknown }> };
    asked++;
    const content = answerTo(body);
    if (body.stream) return new Response(events(body.model, content), { headers: { "content-type": "text/event-stream" } });
    const stop = content.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn";
    return Response.json({
      id: "msg_up",
      type: "message",
      role: "assistant",
      model: body.model,
      content,
      stop_reason: stop,
      stop_sequence: null,
      usage: { input_tokens: 9, output_tokens: 20 },
    });
  });
});
afterEach(() => vi.restoreAllMocks());

const tools: Anthropic.Tool[] = [{ name: "get_order", input_schema: { type: "object", properties: { order_id: { type: "string" } } } }];

/** A two-turn tool loop with thinking on, sending the thinking blocks back as the SDK's agents do. */
async function run(client: Anthropic, model: string, thinking: Anthropic.ThinkingConfigParam, stream: boolean): Promise<Anthropic.ContentBlock[][]> {
  const messages: Anthropic.MessageParam[] = [{ role: "user", content: "Refund order #A-1." }];
  const answers: Anthropic.ContentBlock[][] = [];
  for (let turn = 0; turn < 3; turn++) {
    const params = { model, max_tokens: 4096, thinking, tools, messages };
    const message = stream ? await client.messages.stream(params).finalMessage() : await client.messages.create(params);
    answers.push(message.content);
    messages.push({ role: "assistant", content: message.content });
    const call = message.content.find((b) => b.type === "tool_use");
    if (!call) return answers;
    messages.push({ role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content: '{"status":"delivered"}' }] });
  }
  throw new Error("the agent did not finish");
}

describe("Anthropic thinking (issue 27, item 10)", () => {
  for (const stream of [false, true]) {
    it(`Should record thinking, redacted thinking and signatures and replay them as recorded (stream: ${stream})`, async () => {
      const model = `think-${crypto.randomUUID().slice(0, 8)}`;
      const key = `sk-ant-think-${crypto.randomUUID().slice(0, 8)}`;
      const thinking = { type: "enabled", budget_tokens: 2048 } as const;
      const outcomes: string[] = [];
      const first = await run(anthropicClient(key, outcomes), model, thinking, stream);
      expect(outcomes).toEqual(["miss", "miss"]);
      expect(first[0].slice(0, 2)).toEqual([THINKING, REDACTED]);
      await sdkRecorded(anthropicClient(key), {
        model,
        max_tokens: 4096,
        thinking,
        tools,
        messages: [
          { role: "user", content: "Refund order #A-1." },
          { role: "assistant", content: first[0] },
          { role: "user", content: [{ type: "tool_result", tool_use_id: (first[0][2] as Anthropic.ToolUseBlock).id, content: '{"status":"delivered"}' }] },
        ],
      });
      const again: string[] = [];
      const repeat = await run(anthropicClient(key, again), model, thinking, stream);
      expect(again).toEqual(["hit", "hit"]);
      expect(asked).toBe(2);
      // Thinking text, signatures and redacted data as the model sent them; only the tool id is fresh.
      expect(repeat[0].slice(0, 2)).toEqual([THINKING, REDACTED]);
      expect(repeat[1]).toEqual(first[1]);
      // Another thinking configuration is another tree.
      const other = await anthropicClient(key)
        .messages.create(
          { model, max_tokens: 4096, thinking: { type: "enabled", budget_tokens: 1024 }, tools, messages: [{ role: "user", content: "Refund order #A-1." }] },
          { headers: { "cache-control": "only-if-cached" } },
        )
        .catch((e: unknown) => e);
      expect(other).toBeInstanceOf(Anthropic.APIError);
      expect((other as InstanceType<typeof Anthropic.APIError>).status).toBe(504);
    });
  }

  it("Should key the thinking a conversation sends back: another signature is another path", async () => {
    const model = `think-${crypto.randomUUID().slice(0, 8)}`;
    const key = `sk-ant-think-${crypto.randomUUID().slice(0, 8)}`;
    const thinking = { type: "enabled", budget_tokens: 2048 } as const;
    const first = await run(anthropicClient(key), model, thinking, false);
    const echo = (block: Anthropic.ContentBlock): Anthropic.ContentBlock => (block.type === "thinking" ? { ...block, signature: "forged" } : block);
    const turn2: Anthropic.MessageParam[] = [
      { role: "user", content: "Refund order #A-1." },
      { role: "assistant", content: first[0].map(echo) },
      { role: "user", content: [{ type: "tool_result", tool_use_id: (first[0][2] as Anthropic.ToolUseBlock).id, content: '{"status":"delivered"}' }] },
    ];
    await sdkRecorded(anthropicClient(key), {
      model,
      max_tokens: 4096,
      thinking,
      tools,
      messages: [turn2[0], { role: "assistant", content: first[0] }, turn2[2]],
    });
    const forged = await anthropicClient(key)
      .messages.create({ model, max_tokens: 4096, thinking, tools, messages: turn2 }, { headers: { "cache-control": "only-if-cached" } })
      .catch((e: unknown) => e);
    expect((forged as InstanceType<typeof Anthropic.APIError>).status).toBe(504);
  });
});
