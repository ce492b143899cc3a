import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET_ORDER_SCHEMA, matrixRow, PROMPT, REFUND_SCHEMA, startCompatWorld, type CompatWorld, type Runner } from "./support-compat";

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

describe("compatibility: @anthropic-ai/sdk through wrangler dev", () => {
  matrixRow("anthropic-sdk messages", () => world, "anthropic", anthropicSdk);

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
