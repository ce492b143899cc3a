import { Agent, OpenAIProvider, Runner, tool } from "@openai/agents";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { responsesRefundDesk, startScriptedResponsesModel, type ScriptedResponsesModel } from "../../tools/scripted-responses-model";
import { startWranglerDev, type WranglerDev } from "../support/wrangler-dev";
import { PROMPT, providerMatrixRow, type ProviderRunner } from "./provider.compat-support";

let model: ScriptedResponsesModel;
let dev: WranglerDev;
beforeAll(async () => {
  model = await startScriptedResponsesModel({ script: responsesRefundDesk });
  dev = await startWranglerDev({ vars: { UPSTREAM_BASE_URL: model.url } });
});
afterAll(async () => {
  await dev?.stop();
  await model?.close();
});

/** `@openai/agents`: an `Agent` with two `tool`s, run by a `Runner` on the Responses API (its default model API). */
const agentsSdk: ProviderRunner = async ({ key, stream, desk, fetch }) => {
  const client = new OpenAI({ apiKey: key, baseURL: `${dev.url}/v1`, maxRetries: 0, fetch });
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
  if (stream) {
    const result = await runner.run(agent, PROMPT, { stream: true, maxTurns: 6 });
    for await (const _event of result) {
      // drain the stream
    }
    await result.completed;
    return String(result.finalOutput);
  }
  const result = await runner.run(agent, PROMPT, { maxTurns: 6 });
  return String(result.finalOutput);
};

describe("compatibility: @openai/agents (Responses API) through wrangler dev", () => {
  providerMatrixRow("openai-agents run", /\/v1\/responses$/, () => model.generations(), agentsSdk);

  it("Should forward the client's Authorization unchanged on a miss, and no item id the upstream did not issue", async () => {
    const key = `sk-agents-forward-${crypto.randomUUID().slice(0, 8)}`;
    const seen = model.requests.length;
    const { Desk } = await import("./support-compat");
    await agentsSdk({ key, stream: false, desk: new Desk("delivered"), fetch });
    expect(model.requests[seen].headers.authorization).toBe(`Bearer ${key}`);
    expect(model.requests[seen].headers["muscle-mem-cache"]).toBeUndefined();
    // A shipped run replays the first turn from the tree, then misses with the served items echoed back.
    const before = model.requests.length;
    await agentsSdk({ key, stream: false, desk: new Desk("shipped"), fetch });
    const sent = model.requests.slice(before).map((r) => JSON.stringify(r.body.input));
    expect(sent).toHaveLength(1);
    expect(sent[0]).not.toMatch(/"id":"(msg|fc)_mm/);
  });
});
