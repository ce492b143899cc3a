import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { responsesRefundDesk, startScriptedResponsesModel, type ScriptedResponsesModel } from "../../tools/scripted-responses-model";
import { startWranglerDev, type WranglerDev } from "../support/wrangler-dev";
import { runAgentsSdk } from "./openai-agents.support";
import { providerFetch, providerMatrixRow, type ProviderExchange, type ProviderRunner } from "./provider.compat-support";
import { Desk } from "./support-compat";

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

const RESPONSES = /\/v1\/responses$/;

/** One run of the Agents SDK for an order: each model call's outcome (`template` for a hit a template served), the desk's effects, the final text. */
async function run(key: string, order: string, amount: number, headers: Record<string, string> = {}) {
  const exchanges: ProviderExchange[] = [];
  const templates: string[] = [];
  const logged = providerFetch(exchanges, RESPONSES);
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const request = new Request(input, init);
    for (const [name, value] of Object.entries(headers)) request.headers.set(name, value);
    const response = await logged(request);
    if (request.method === "POST") templates.push(response.headers.get("muscle-mem-template") ?? "");
    return response;
  };
  const desk = new Desk("delivered", amount);
  const final = await runAgentsSdk({ baseURL: `${dev.url}/v1`, key, stream: false, desk, fetch, prompt: `Please refund order #${order}.` });
  const outcomes = exchanges.map((e, i) => (e.outcome === "hit" && templates[i] ? "template" : e.outcome));
  return { outcomes, effects: desk.effects, final };
}

/** Waits until every model call of a run for `order` is served without the model (`only-if-cached`: anything else is a 504 and the run throws). */
async function servedWhole(key: string, order: string, amount: number, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const done = await run(key, order, amount, { "cache-control": "only-if-cached" }).catch(() => null);
    if (done?.outcomes.every((o) => o === "hit" || o === "template")) return;
    if (Date.now() > deadline) throw new Error(`${what} within 60 s`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("learned templates through @openai/agents (Responses, `store` left unset)", () => {
  it("Should serve a new order's id and amount from a template learned on three others, its every call kept for previous_response_id", async () => {
    const key = `sk-agents-templates-${crypto.randomUUID().slice(0, 8)}`;
    for (const [order, amount] of [
      ["B-2", 18],
      ["C-3", 99.9],
      ["D-4", 7.25],
    ] as const) {
      await run(key, order, amount);
      await servedWhole(key, order, amount, `${order}'s calls were not all recorded`);
    }
    await servedWhole(key, "E-5", 61, "no template served every call of a new order");
    const before = model.generations();
    const fourth = await run(key, "E-5", 61);
    expect(fourth.outcomes).toEqual(["template", "template", "template"]);
    expect(fourth.effects).toEqual(["get_order E-5", "refund E-5 61"]);
    expect(fourth.final).toBe("Done: order E-5 was refunded.");
    expect(model.generations()).toBe(before);
    const kept = await dev.sql("SELECT COUNT(*) AS n FROM served_answers");
    expect(Number(kept[0].n)).toBeGreaterThanOrEqual(3);
  });
});
