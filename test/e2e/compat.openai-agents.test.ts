import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { responsesRefundDesk, startScriptedResponsesModel, type ScriptedResponsesModel } from "../../tools/scripted-responses-model";
import { startWranglerDev, type WranglerDev } from "../support/wrangler-dev";
import { runAgentsSdk } from "./openai-agents.support";
import { providerMatrixRow, type ProviderRunner } from "./provider.compat-support";

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

/** `@openai/agents` through this file's Worker (openai-agents.support.ts). */
const agentsSdk: ProviderRunner = (opts) => runAgentsSdk({ ...opts, baseURL: `${dev.url}/v1` });

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
