import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, stepCountIs, streamText, tool, type LanguageModel } from "ai";
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
    get_order: tool({
      description: "Look up an order by id.",
      inputSchema: z.object({ order_id: z.string() }),
      execute: async ({ order_id }) => desk.getOrder(order_id),
    }),
    refund: tool({
      description: "Refund an order in full.",
      inputSchema: z.object({ order_id: z.string(), amount: z.number() }),
      execute: async ({ order_id, amount }) => desk.refund(order_id, amount),
    }),
  };
}

/** generateText / streamText with tools and multi-step (stopWhen), for the model a provider builds. */
function aiSdk(model: (key: string, fetch: typeof globalThis.fetch) => LanguageModel): Runner {
  return async ({ key, stream, desk, fetch }) => {
    const options = {
      model: model(key, fetch),
      system: "You are a refund desk.",
      tools: deskTools(desk),
      stopWhen: stepCountIs(6),
      prompt: PROMPT,
      maxOutputTokens: 512,
      maxRetries: 0,
    };
    if (!stream) return (await generateText(options)).text;
    let failure: unknown;
    const result = streamText({ ...options, onError: ({ error }) => void (failure = error) });
    await result.consumeStream();
    if (failure) throw failure;
    return await result.text;
  };
}

const openaiChat = aiSdk((apiKey, fetch) => createOpenAI({ apiKey, baseURL: `${world.dev.url}/v1`, fetch }).chat("gpt-compat"));
const anthropic = aiSdk((apiKey, fetch) => createAnthropic({ apiKey, baseURL: `${world.dev.url}/v1`, fetch })("claude-compat"));

describe("compatibility: Vercel AI SDK through wrangler dev", () => {
  matrixRow("ai-sdk @ai-sdk/openai (chat)", () => world, "openai", openaiChat);
  matrixRow("ai-sdk @ai-sdk/anthropic", () => world, "anthropic", anthropic);
});
