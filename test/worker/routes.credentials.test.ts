import { env, exports } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { eventually } from "./helpers";

/** Every request the Worker sends out, and which var's upstream it went to. */
interface Sent {
  upstream: "gemini" | "openai-or-anthropic";
  url: string;
  headers: Headers;
}

let sent: Sent[] = [];
const geminiOrigin = () => new URL((env as unknown as { GEMINI_BASE_URL: string }).GEMINI_BASE_URL).origin;
const GEMINI_ANSWER = {
  candidates: [{ content: { role: "model", parts: [{ text: "Hi." }] }, finishReason: "STOP", index: 0 }],
  usageMetadata: { promptTokenCount: 2, candidatesTokenCount: 1 },
};

beforeEach(() => {
  sent = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    const gemini = url.origin === geminiOrigin();
    sent.push({ upstream: gemini ? "gemini" : "openai-or-anthropic", url: url.pathname + url.search, headers: request.headers });
    if (gemini && url.pathname.endsWith(":generateContent")) return Response.json(GEMINI_ANSWER);
    return Response.json({ relayed: true });
  });
});
afterEach(() => vi.restoreAllMocks());

function call(path: string, headers: Record<string, string>, body?: unknown): Promise<Response> {
  return exports.default.fetch(
    new Request(`http://mm.test${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers: { "content-type": "application/json", ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );
}

const ask = { contents: [{ role: "user", parts: [{ text: `Hello ${crypto.randomUUID()}` }] }] };

describe("Gemini's stable API version (/v1/) and credentials meant for one provider", () => {
  it("Should send /v1/models/{model}:generateContent to GEMINI_BASE_URL, with its key and its path, and cache it", async () => {
    const key = `gm-v1-${crypto.randomUUID().slice(0, 8)}`;
    const first = await call("/v1/models/gemini-stable:generateContent", { "x-goog-api-key": key }, ask);
    expect(first.status).toBe(200);
    expect(first.headers.get("muscle-mem-cache")).toBe("miss");
    await first.arrayBuffer();
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ upstream: "gemini", url: "/v1/models/gemini-stable:generateContent" });
    expect(sent[0].headers.get("x-goog-api-key")).toBe(key);
    await eventually(
      async () => (await call("/v1/models/gemini-stable:generateContent", { "x-goog-api-key": key, "cache-control": "only-if-cached" }, ask)).status === 200,
    );
    const again = await call("/v1/models/gemini-stable:generateContent", { "x-goog-api-key": key }, ask);
    expect(again.headers.get("muscle-mem-cache")).toBe("hit");
    expect(((await again.json()) as typeof GEMINI_ANSWER).candidates[0].content.parts[0].text).toBe("Hi.");
    // The same request on v1beta is another tree: the two versions may answer differently.
    const beta = await call("/v1beta/models/gemini-stable:generateContent", { "x-goog-api-key": key, "cache-control": "only-if-cached" }, ask);
    expect(beta.status).toBe(504);
  });

  it("Should relay Gemini's other /v1/ calls (a key-only model list, countTokens) to GEMINI_BASE_URL", async () => {
    await (await call("/v1/models", { "x-goog-api-key": "gm-list" })).arrayBuffer();
    await (await call("/v1/models/gemini-stable:countTokens", {}, ask)).arrayBuffer();
    expect(sent.map((s) => [s.upstream, s.url])).toEqual([
      ["gemini", "/v1/models"],
      ["gemini", "/v1/models/gemini-stable:countTokens"],
    ]);
  });

  it("Should never forward x-goog-api-key to the Anthropic or OpenAI upstream", async () => {
    const messages = { model: "claude-x", max_tokens: 8, messages: [{ role: "user", content: "hi" }] };
    await (await call("/v1/messages", { "x-api-key": "sk-ant-1", "anthropic-version": "2023-06-01", "cache-control": "no-store" }, messages)).arrayBuffer();
    await (
      await call(
        "/v1/chat/completions",
        { authorization: "Bearer sk-1", "cache-control": "no-store" },
        { model: "m", messages: [{ role: "user", content: "hi" }] },
      )
    ).arrayBuffer();
    for (const s of sent) expect(s.upstream).toBe("openai-or-anthropic");
    // The same calls with a Google key beside the provider's own: the Google key stays here.
    sent = [];
    const google = { "x-goog-api-key": "gm-secret", "cache-control": "no-store" };
    await (await call("/v1/messages", { ...google, "x-api-key": "sk-ant-1", "anthropic-version": "2023-06-01" }, messages)).arrayBuffer();
    await (
      await call("/v1/chat/completions", { ...google, authorization: "Bearer sk-1" }, { model: "m", messages: [{ role: "user", content: "hi" }] })
    ).arrayBuffer();
    await (await call("/v1/messages/count_tokens", { ...google, "x-api-key": "sk-ant-1", "anthropic-version": "2023-06-01" }, messages)).arrayBuffer();
    expect(sent.map((s) => s.upstream)).toEqual(["openai-or-anthropic", "openai-or-anthropic", "openai-or-anthropic"]);
    expect(sent[0].headers.get("x-api-key")).toBe("sk-ant-1");
    for (const s of sent) expect(s.headers.get("x-goog-api-key")).toBeNull();
  });
});
