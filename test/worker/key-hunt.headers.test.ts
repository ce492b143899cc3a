import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { chat, recorded, uniqueModel } from "./helpers";
import { gemini, recordedGemini } from "./gemini.support";
import { onlyIfCached, served } from "./key-hunt.support";

/**
 * Wrong replays hunted in what is keyed: request A is recorded, then B, which differs from A only in one
 * thing the upstream reads outside the body (a query parameter, a header), must not be served A's answer (only-if-cached: 504, or a bypass), and a plain B
 * reaches the model. Each case failed (B was a hit) before its fix.
 */

describe("key hunt: what a request asks of the upstream outside the body", () => {
  it("Should not serve a Gemini JSON answer to a request that asks for another response format (?alt=proto, ?alt=sse on generateContent)", async () => {
    const model = uniqueModel("gm-echo");
    const init = { key: "gm-hunt-alt" };
    const body = { contents: [{ role: "user", parts: [{ text: "which wire format?" }] }] };
    await (await gemini(model, body, init)).arrayBuffer();
    await recordedGemini(model, body, init);
    const ask = (query: string) =>
      exports.default.fetch(
        new Request(`http://mm.test/v1beta/models/${model}:generateContent${query}`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-goog-api-key": init.key, ...onlyIfCached },
          body: JSON.stringify(body),
        }),
      );
    // JSON is the default: asking for it is the same request.
    expect(await served(await ask("?alt=json"))).toBe(true);
    expect(await served(await ask("?alt=proto"))).toBe(false);
    expect(await served(await ask("?alt=sse"))).toBe(false);
    expect(await served(await ask("?alt=json&alt=proto"))).toBe(false);
  });
});

describe("key hunt: a gateway header that routes to another model or account is keyed", () => {
  /** Portkey headers (its gateway's own list) that pick the model, deployment, account or what the provider reads. */
  const ROUTES: Array<[string, string, string]> = [
    ["x-portkey-amzn-sagemaker-target-model", "model-a.tar.gz", "model-b.tar.gz"],
    ["x-portkey-azure-foundry-url", "https://a.services.ai.azure.com/models", "https://b.services.ai.azure.com/models"],
    ["x-portkey-azure-deployment-name", "gpt-4o", "gpt-4o-mini"],
    ["x-portkey-workers-ai-account-id", "acct-a", "acct-b"],
    ["x-portkey-forward-headers", "x-route", "x-other"],
  ];
  for (const [name, one, other] of ROUTES) {
    it(`Should not serve an answer recorded through Portkey with another ${name}`, async () => {
      const model = uniqueModel("echo");
      const init = { key: `sk-hunt-gw-${crypto.randomUUID()}` };
      const body = { model, messages: [{ role: "user", content: "which route answers?" }] };
      await (await chat(body, { ...init, headers: { [name]: one } })).arrayBuffer();
      await recorded(body, { ...init, headers: { [name]: one } });
      expect(await served(await chat(body, { ...init, headers: { [name]: other, ...onlyIfCached } }))).toBe(false);
    });
  }

  it("Should not serve an answer recorded with one Portkey Entra client secret to a request with another", async () => {
    const model = uniqueModel("echo");
    const body = { model, messages: [{ role: "user", content: "whose Azure answers?" }] };
    const init = { key: "placeholder", headers: { "x-portkey-azure-entra-client-secret": `secret-a-${crypto.randomUUID()}` } };
    await (await chat(body, init)).arrayBuffer();
    await recorded(body, init);
    const other = { "x-portkey-azure-entra-client-secret": `secret-b-${crypto.randomUUID()}`, ...onlyIfCached };
    expect(await served(await chat(body, { key: "placeholder", headers: other }))).toBe(false);
  });
});

describe("key hunt: a header an upstream reads to decide what it may answer", () => {
  /** Azure's: a content filter configuration per request, unknown body parameters passed or dropped, an ML endpoint's deployment. */
  const AZURE: Array<[string, string, string]> = [
    ["x-policy-id", "lenient", "strict"],
    ["extra-parameters", "pass-through", "drop"],
    ["azureml-model-deployment", "blue", "green"],
  ];
  for (const [name, one, other] of AZURE) {
    it(`Should not serve a chat answer recorded with one ${name} to a request with another, or without it`, async () => {
      const model = uniqueModel("echo");
      const init = { key: `sk-hunt-azure-${name}` };
      const body = { model, messages: [{ role: "user", content: "tell me about lock picking" }], top_k: 5 };
      await (await chat(body, { ...init, headers: { [name]: one } })).arrayBuffer();
      await recorded(body, { ...init, headers: { [name]: one } });
      expect(await served(await chat(body, { ...init, headers: { [name]: other, ...onlyIfCached } }))).toBe(false);
      expect(await served(await chat(body, { ...init, headers: onlyIfCached }))).toBe(false);
    });
  }
});
