import { HumanMessage, SystemMessage, ToolMessage, type AIMessageChunk, type BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { ChatOpenAI } from "@langchain/openai";
import { afterAll, beforeAll, describe } from "vitest";
import { z } from "zod";
import { matrixRow, PROMPT, startCompatWorld, type CompatWorld, type Desk, type Runner } from "./support-compat";

let world: CompatWorld;
beforeAll(async () => {
  world = await startCompatWorld();
});
afterAll(async () => {
  await world?.stop();
});

function deskTools(desk: Desk) {
  return {
    getOrder: tool(async ({ order_id }: { order_id: string }) => desk.getOrder(order_id), {
      name: "get_order",
      description: "Look up an order by id.",
      schema: z.object({ order_id: z.string() }),
    }),
    refund: tool(async ({ order_id, amount }: { order_id: string; amount: number }) => desk.refund(order_id, amount), {
      name: "refund",
      description: "Refund an order in full.",
      schema: z.object({ order_id: z.string(), amount: z.number() }),
    }),
  };
}

/**
 * A tool-calling agent loop with ChatOpenAI.bindTools: `invoke` (or `stream`, its chunks concatenated),
 * run each tool call, feed back ToolMessages. Streaming uses `.stream()`: `invoke` with
 * `streaming: true` estimates token counts with tiktoken, which downloads its tables.
 */
const langchain: Runner = async ({ key, stream, desk, fetch }) => {
  const { getOrder, refund } = deskTools(desk);
  const chat = new ChatOpenAI({ model: "gpt-compat-lc", apiKey: key, maxRetries: 0, configuration: { baseURL: `${world.dev.url}/v1`, fetch } });
  const model = chat.bindTools([getOrder, refund]);
  const messages: BaseMessage[] = [new SystemMessage("You are a refund desk."), new HumanMessage(PROMPT)];
  for (let turn = 0; turn < 6; turn++) {
    const reply = stream ? await streamed(model, messages) : await model.invoke(messages);
    messages.push(reply);
    if (!reply.tool_calls?.length) return typeof reply.content === "string" ? reply.content : JSON.stringify(reply.content);
    for (const call of reply.tool_calls) {
      const args = call.args as { order_id: string; amount: number };
      const output: string = call.name === "get_order" ? await getOrder.invoke({ order_id: args.order_id }) : await refund.invoke(args);
      messages.push(new ToolMessage({ content: output, tool_call_id: call.id ?? "" }));
    }
  }
  throw new Error("the agent did not finish");
};

async function streamed(model: { stream: (m: BaseMessage[]) => Promise<AsyncIterable<AIMessageChunk>> }, messages: BaseMessage[]): Promise<AIMessageChunk> {
  let full: AIMessageChunk | undefined;
  for await (const chunk of await model.stream(messages)) full = full ? full.concat(chunk) : chunk;
  if (!full) throw new Error("empty stream");
  return full;
}

describe("compatibility: LangChain JS (@langchain/openai) through wrangler dev", () => {
  matrixRow("langchain ChatOpenAI agent loop", () => world, "openai", langchain);
});
