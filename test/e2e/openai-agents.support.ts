import { Agent, OpenAIProvider, Runner, tool } from "@openai/agents";
import OpenAI from "openai";
import { z } from "zod";
import { PROMPT } from "./provider.compat-support";
import type { Desk } from "./support-compat";

/**
 * `@openai/agents`: an `Agent` with two `tool`s, run by a `Runner` on the Responses API (its default model API;
 * `store` left unset, the whole conversation sent each turn), through the Worker at `baseURL`. Its final text.
 */
export async function runAgentsSdk(opts: { baseURL: string; key: string; stream: boolean; desk: Desk; fetch: typeof fetch; prompt?: string }): Promise<string> {
  const { desk } = opts;
  const client = new OpenAI({ apiKey: opts.key, baseURL: opts.baseURL, maxRetries: 0, fetch: opts.fetch });
  const runner = new Runner({ modelProvider: new OpenAIProvider({ openAIClient: client, useResponses: true }), tracingDisabled: true });
  const agent = new Agent({
    name: "refund desk",
    instructions: "You are a refund desk.",
    model: "gpt-agents-compat",
    tools: [
      tool({
        name: "get_order",
        description: "Look up an order by id.",
        parameters: z.object({ order_id: z.string() }),
        execute: ({ order_id }) => desk.getOrder(order_id),
      }),
      tool({
        name: "refund",
        description: "Refund an order in full.",
        parameters: z.object({ order_id: z.string(), amount: z.number() }),
        execute: ({ order_id, amount }) => desk.refund(order_id, amount),
      }),
    ],
  });
  const prompt = opts.prompt ?? PROMPT;
  if (opts.stream) {
    const result = await runner.run(agent, prompt, { stream: true, maxTurns: 6 });
    for await (const _event of result) {
      // drain the stream
    }
    await result.completed;
    return String(result.finalOutput);
  }
  const result = await runner.run(agent, prompt, { maxTurns: 6 });
  return String(result.finalOutput);
}
