import Anthropic from "@anthropic-ai/sdk";
import { betaTool } from "@anthropic-ai/sdk/helpers/beta/json-schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  Desk,
  GET_ORDER_SCHEMA,
  matrixRow,
  PROMPT,
  REFUND_SCHEMA,
  startCompatWorld,
  trackingFetch,
  type CompatWorld,
  type Exchange,
  type Runner,
} from "./support-compat";

let world: CompatWorld;
beforeAll(async () => {
  world = await startCompatWorld();
});
afterAll(async () => {
  await world?.stop();
});

const tools: Anthropic.Tool[] = [
  { name: "get_order", description: "Look up an order by id.", input_schema: GET_ORDER_SCHEMA },
  { name: "refund", description: "Refund an order in full.", input_schema: REFUND_SCHEMA },
];

/** The Anthropic SDK's own loop: messages.create or messages.stream, tool_use → tool_result until end_turn. */
const anthropicSdk: Runner = async ({ key, stream, desk, fetch }) => {
  const client = new Anthropic({ apiKey: key, baseURL: world.dev.url, maxRetries: 0, fetch });
  const messages: Anthropic.MessageParam[] = [{ role: "user", content: PROMPT }];
  for (let turn = 0; turn < 6; turn++) {
    const params = { model: "claude-compat", max_tokens: 512, system: "You are a refund desk.", tools, messages };
    const reply = stream ? await client.messages.stream(params).finalMessage() : await client.messages.create(params);
    messages.push({ role: "assistant", content: reply.content });
    if (reply.stop_reason !== "tool_use") return reply.content.map((b) => (b.type === "text" ? b.text : "")).join("");
    const results: Anthropic.ToolResultBlockParam[] = [];
    for (const block of reply.content) {
      if (block.type !== "tool_use") continue;
      const input = block.input as { order_id: string; amount: number };
      const output = block.name === "get_order" ? desk.getOrder(input.order_id) : desk.refund(input.order_id, input.amount);
      results.push({ type: "tool_result", tool_use_id: block.id, content: output });
    }
    messages.push({ role: "user", content: results });
  }
  throw new Error("the agent did not finish");
};

/**
 * The SDK's tool runner helper (`beta.messages.toolRunner`): it calls the tools and loops by itself.
 * By default it keeps the conversation in a server-side message thread, which the Worker passes
 * through; with `thread: false` it sends the whole conversation every turn, and the Worker caches it.
 */
const toolRunner =
  (thread: boolean): Runner =>
  async ({ key, stream, desk, fetch }) => {
    const client = new Anthropic({ apiKey: key, baseURL: world.dev.url, maxRetries: 0, fetch });
    const tools = [
      betaTool({
        name: "get_order",
        description: "Look up an order by id.",
        inputSchema: { type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"], additionalProperties: false },
        run: ({ order_id }) => desk.getOrder(order_id),
      }),
      betaTool({
        name: "refund",
        description: "Refund an order in full.",
        inputSchema: {
          type: "object",
          properties: { order_id: { type: "string" }, amount: { type: "number" } },
          required: ["order_id", "amount"],
          additionalProperties: false,
        },
        run: ({ order_id, amount }) => desk.refund(order_id, amount),
      }),
    ];
    const params = {
      model: "claude-compat-runner",
      max_tokens: 512,
      max_iterations: 6,
      tools,
      messages: [{ role: "user" as const, content: PROMPT }],
      ...(thread ? {} : { thread: false as const }),
    };
    const final = stream
      ? await client.beta.messages.toolRunner({ ...params, stream: true }).runUntilDone()
      : await client.beta.messages.toolRunner(params).runUntilDone();
    return final.content.map((b) => (b.type === "text" ? b.text : "")).join("");
  };

describe("compatibility: @anthropic-ai/sdk through wrangler dev", () => {
  matrixRow("anthropic-sdk messages", () => world, "anthropic", anthropicSdk);
  matrixRow("anthropic-sdk beta toolRunner (thread: false)", () => world, "anthropic", toolRunner(false));

  it("Should send the Anthropic SDK's other calls to ANTHROPIC_BASE_URL", async () => {
    const res = await fetch(`${world.dev.url}/v1/messages/count_tokens`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": "sk-ant-count", "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: "claude-compat", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.headers.get("muscle-mem-cache")).toBe("bypass");
    // The scripted Anthropic server answers unknown routes in Anthropic's error shape; the OpenAI one would not.
    expect(await res.json()).toMatchObject({ type: "error", error: { type: "not_found_error", message: "no route POST /v1/messages/count_tokens" } });
  });

  it("Should pass the tool runner's default message threads through, uncached, with the same tool effects", async () => {
    const exchanges: Exchange[] = [];
    const desk = new Desk("delivered");
    const final = await toolRunner(true)({ key: "sk-ant-threads", stream: false, desk, fetch: trackingFetch(exchanges) });
    expect(exchanges.map((e) => e.outcome)).toEqual(["bypass", "bypass", "bypass"]);
    expect(desk.effects).toEqual(["get_order A-1", "refund A-1 42.5"]);
    expect(final).toContain("refunded");
  });

  it("Should forward the client's credentials and anthropic-version unchanged", async () => {
    const seen = world.anthropic.requests.length;
    const res = await fetch(`${world.dev.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": "sk-ant-forward", "anthropic-version": "2023-06-01", "anthropic-beta": "tools-2024-04-04" },
      body: JSON.stringify({ model: "claude-compat", max_tokens: 64, messages: [{ role: "user", content: "Refund order #A-9" }] }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("muscle-mem-cache")).toBe("miss");
    const headers = world.anthropic.requests[seen].headers;
    expect(headers["x-api-key"]).toBe("sk-ant-forward");
    expect(headers["anthropic-version"]).toBe("2023-06-01");
    expect(headers["anthropic-beta"]).toBe("tools-2024-04-04");
    expect(headers["muscle-mem-cache"]).toBeUndefined();
  });
});
