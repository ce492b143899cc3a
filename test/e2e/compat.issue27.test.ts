import Anthropic from "@anthropic-ai/sdk";
import { GoogleGenAI } from "@google/genai";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import claudeCode from "../fixtures/agents/claude-code.request.json";
import { anthropicRefundDesk, startScriptedAnthropic, type ScriptedAnthropic } from "../../tools/scripted-anthropic";
import { geminiRefundDesk, startScriptedGeminiModel, type ScriptedGeminiModel } from "../../tools/scripted-gemini-model";
import { refundDeskScript } from "../../tools/refund-desk";
import { startScriptedModel, type ScriptedModel } from "../../tools/scripted-model";
import { startWranglerDev, type WranglerDev } from "../support/wrangler-dev";

/**
 * Issue 27 through the real clients in node_modules against `wrangler dev`: the only-if-cached 504 is not
 * retried and raises a catchable error class (openai, @anthropic-ai/sdk), Anthropic clients read Anthropic's
 * error envelope, Gemini's stable API version (`apiVersion: "v1"`) is cached at GEMINI_BASE_URL and its key
 * never reaches another upstream, and Claude Code's request shape hits on a repeated run.
 */
let openaiModel: ScriptedModel;
let anthropicModel: ScriptedAnthropic;
let geminiModel: ScriptedGeminiModel;
let dev: WranglerDev;
beforeAll(async () => {
  openaiModel = await startScriptedModel({ script: refundDeskScript });
  anthropicModel = await startScriptedAnthropic({ script: anthropicRefundDesk });
  geminiModel = await startScriptedGeminiModel({ script: geminiRefundDesk });
  dev = await startWranglerDev({ vars: { UPSTREAM_BASE_URL: openaiModel.url, ANTHROPIC_BASE_URL: anthropicModel.url, GEMINI_BASE_URL: geminiModel.url } });
});
afterAll(async () => {
  await dev?.stop();
  await openaiModel?.close();
  await anthropicModel?.close();
  await geminiModel?.close();
});

/** A fetch that counts the requests a client sends (its retries included). */
function counting(): { fetch: typeof fetch; count: () => number } {
  let n = 0;
  return { fetch: (input, init) => ((n += 1), fetch(input, init)), count: () => n };
}

const id = () => crypto.randomUUID().slice(0, 8);

describe("issue 27 through the real clients and wrangler dev", () => {
  it("openai: only-if-cached on a miss raises InternalServerError (504) once, not retried (x-should-retry: false)", async () => {
    const sent = counting();
    const client = new OpenAI({ apiKey: `sk-27-${id()}`, baseURL: `${dev.url}/v1`, fetch: sent.fetch }); // default retries (2)
    const error = await client.chat.completions
      .create({ model: `m-${id()}`, messages: [{ role: "user", content: "hi" }] }, { headers: { "cache-control": "only-if-cached" } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(504);
    expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe("not_cached");
    expect(sent.count()).toBe(1);
  });

  it("@anthropic-ai/sdk: only-if-cached raises InternalServerError once, in Anthropic's envelope; bad input a BadRequestError", async () => {
    const sent = counting();
    const client = new Anthropic({ apiKey: `sk-ant-27-${id()}`, baseURL: dev.url, fetch: sent.fetch });
    const params = { model: `c-${id()}`, max_tokens: 16, messages: [{ role: "user" as const, content: "hi" }] };
    const error = await client.messages.create(params, { headers: { "cache-control": "only-if-cached" } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.InternalServerError);
    const apiError = error as InstanceType<typeof Anthropic.APIError>;
    expect(apiError.status).toBe(504);
    expect(apiError.error).toEqual({
      type: "error",
      error: { type: "timeout_error", message: "No cached answer for this request (cache-control: only-if-cached)." },
    });
    expect(apiError.headers?.get("muscle-mem-error")).toBe("not_cached");
    expect(sent.count()).toBe(1);
    const bad = await client.messages.create(params, { headers: { "muscle-mem-namespace": "not a namespace!" } }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(Anthropic.BadRequestError);
    expect((bad as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
  });

  it("@google/genai with apiVersion v1: cached at GEMINI_BASE_URL (miss, then hit); the Gemini key never reaches another upstream", async () => {
    const key = `gm-27-${id()}`;
    const ai = new GoogleGenAI({ apiKey: key, apiVersion: "v1", httpOptions: { baseUrl: dev.url } });
    const seen = geminiModel.requests.length;
    const ask = { model: `gemini-v1-${id()}`, contents: "Please refund order #A-1." };
    const outcomes: string[] = [];
    const saved = globalThis.fetch;
    globalThis.fetch = async (input, init) => {
      const res = await saved(input, init);
      outcomes.push(res.headers.get("muscle-mem-cache") ?? "none");
      return res;
    };
    try {
      const first = await ai.models.generateContent(ask);
      for (let i = 0; i < 100; i++) {
        const probe = await saved(`${dev.url}/v1/models/${ask.model}:generateContent`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-goog-api-key": key, "cache-control": "only-if-cached" },
          body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: ask.contents }] }] }),
        });
        await probe.arrayBuffer();
        if (probe.status === 200) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      const second = await ai.models.generateContent(ask);
      expect(second.candidates?.[0]?.content).toEqual(first.candidates?.[0]?.content);
    } finally {
      globalThis.fetch = saved;
    }
    expect(outcomes.filter((o) => o !== "none")).toEqual(["miss", "hit"]);
    expect(geminiModel.requests.length - seen).toBe(1);
    expect(geminiModel.requests[seen].url).toBe(`/v1/models/${ask.model}:generateContent`);
    expect(geminiModel.requests[seen].headers["x-goog-api-key"]).toBe(key);
    for (const r of anthropicModel.requests) expect(r.headers["x-goog-api-key"]).toBeUndefined();
  });

  it("Claude Code's request (test/fixtures/agents/claude-code.request.json, adaptive thinking, a role: system message) misses, then hits streamed", async () => {
    const key = `sk-ant-cc-${id()}`;
    const model = `claude-cc-${id()}`;
    const send = (headers: Record<string, string> = {}) =>
      fetch(`${dev.url}/v1/messages${claudeCode._query}`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": key, ...claudeCode._headers, ...headers },
        body: JSON.stringify({ ...claudeCode.body, model }),
      });
    const first = await send();
    expect(first.status).toBe(200);
    expect(first.headers.get("muscle-mem-cache")).toBe("miss");
    await first.text();
    for (let i = 0; i < 100; i++) {
      const probe = await send({ "cache-control": "only-if-cached" });
      await probe.arrayBuffer();
      if (probe.status === 200) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const again = await send();
    expect(again.headers.get("muscle-mem-cache")).toBe("hit");
    expect(await again.text()).toContain("event: message_stop");
  });
});
