import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { forgetAccepted, keyClock } from "../../src/engine/key-freshness";
import { api } from "./api-helpers";
import { gemini, recordedGemini } from "./gemini.support";
import { uniqueModel } from "./helpers";
import { messageRecorded, postMessages } from "./messages.support";

/**
 * KEY_FRESH_MS for `/api` reads (issue 29, outcome 5): a stale tenant key is re-checked at the provider it
 * belongs to, sent the way that provider takes it. The scripted upstreams (tools/model-list.ts) record each
 * model-list call by the key it carried: where it went and in which header.
 */

interface ModelListCall {
  path: string;
  via: string;
  anthropicVersion: string | null;
}

const FRESH_MS = 900_000;
const geminiBase = (env as unknown as { GEMINI_BASE_URL: string }).GEMINI_BASE_URL;

async function listCalls(base: string, key: string): Promise<ModelListCall[]> {
  return (await (await fetch(`${base}/__model-lists?key=${encodeURIComponent(key)}`)).json()) as ModelListCall[];
}

async function revoke(base: string, key: string): Promise<void> {
  await (await fetch(`${base}/__revoke`, { method: "POST", body: key })).arrayBuffer();
}

/** A tree read through /api with the key, from an isolate that knows nothing of it (only D1 does). */
async function treesStatus(key: string): Promise<number> {
  forgetAccepted();
  const res = await api("/trees", { token: key });
  await res.arrayBuffer();
  return res.status;
}

afterEach(() => {
  keyClock.now = () => Date.now();
  forgetAccepted();
});

describe("a stale key's /api reads are re-checked at its own provider", () => {
  it("Should ask Anthropic's GET /v1/models with x-api-key and anthropic-version for a key Anthropic accepted, and refuse it once revoked", async () => {
    let now = 3_000_000_000;
    keyClock.now = () => now;
    // No shape of Anthropic's: only what the Worker saw (its Messages call) says whose key it is.
    const key = `k-anthropic-${crypto.randomUUID()}`;
    const body = { model: uniqueModel("echo"), max_tokens: 64, messages: [{ role: "user", content: "Which provider?" }] };
    await (await postMessages(body, { key })).arrayBuffer();
    await messageRecorded(body, { key });
    now += FRESH_MS;
    expect(await treesStatus(key)).toBe(200);
    expect(await listCalls(env.UPSTREAM_TEST_URL, key)).toEqual([{ path: "/v1/models", via: "x-api-key", anthropicVersion: "2023-06-01" }]);
    await revoke(env.UPSTREAM_TEST_URL, key);
    now += FRESH_MS;
    expect(await treesStatus(key)).toBe(401);
    const calls = await listCalls(env.UPSTREAM_TEST_URL, key);
    expect(calls.map((c) => c.via)).toEqual(["x-api-key", "x-api-key"]);
  });

  it("Should ask Gemini's GET /v1beta/models with x-goog-api-key for a key Gemini accepted, and refuse it once revoked", async () => {
    let now = 4_000_000_000;
    keyClock.now = () => now;
    const key = `k-gemini-${crypto.randomUUID()}`;
    const model = uniqueModel("echo");
    const body = { contents: [{ role: "user", parts: [{ text: "Which provider?" }] }] };
    await (await gemini(model, body, { key })).arrayBuffer();
    await recordedGemini(model, body, { key });
    now += FRESH_MS;
    expect(await treesStatus(key)).toBe(200);
    expect(await listCalls(geminiBase, key)).toEqual([{ path: "/v1beta/models", via: "x-goog-api-key", anthropicVersion: null }]);
    expect(await listCalls(env.UPSTREAM_TEST_URL, key)).toEqual([]);
    await revoke(geminiBase, key);
    now += FRESH_MS;
    expect(await treesStatus(key)).toBe(401);
    expect((await listCalls(geminiBase, key)).map((c) => c.path)).toEqual(["/v1beta/models", "/v1beta/models"]);
  });

  it("Should ask by the key's shape when no provider has accepted it through the Worker: sk-ant- to Anthropic, AIza to Gemini, else OpenAI", async () => {
    keyClock.now = () => 5_000_000_000;
    const anthropic = `sk-ant-${crypto.randomUUID()}`;
    const google = `AIza${crypto.randomUUID()}`;
    const openai = `sk-${crypto.randomUUID()}`;
    for (const key of [anthropic, google, openai]) expect(await treesStatus(key)).toBe(200);
    expect(await listCalls(env.UPSTREAM_TEST_URL, anthropic)).toEqual([{ path: "/v1/models", via: "x-api-key", anthropicVersion: "2023-06-01" }]);
    expect(await listCalls(geminiBase, google)).toEqual([{ path: "/v1beta/models", via: "x-goog-api-key", anthropicVersion: null }]);
    expect(await listCalls(env.UPSTREAM_TEST_URL, openai)).toEqual([{ path: "/v1/models", via: "authorization", anthropicVersion: null }]);
  });
});
