import { env, exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";

/**
 * Pass-through hunt (docs/compat.md, Gemini): a call the Worker relays unchanged goes to the provider whose
 * credential it carries, never with that credential to another. Each case here failed before its fix.
 */

afterEach(() => vi.restoreAllMocks());

describe("pass-through calls go to the provider whose credential they carry", () => {
  it("Should send Gemini's REST model list and model read with ?key= to GEMINI_BASE_URL, never the Google key to OpenAI's upstream", async () => {
    const gemini = new URL((env as unknown as { GEMINI_BASE_URL: string }).GEMINI_BASE_URL).origin;
    const sent: Array<{ gemini: boolean; url: string }> = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
      const url = new URL(new Request(input, init).url);
      sent.push({ gemini: url.origin === gemini, url: url.pathname + url.search });
      return Response.json({ models: [] });
    });
    for (const path of ["/v1/models?key=AIza-hunt", "/v1/models/gemini-2.0-flash?key=AIza-hunt"]) {
      const res = await exports.default.fetch(new Request(`http://mm.test${path}`));
      await res.arrayBuffer();
    }
    expect(sent).toEqual([
      { gemini: true, url: "/v1/models?key=AIza-hunt" },
      { gemini: true, url: "/v1/models/gemini-2.0-flash?key=AIza-hunt" },
    ]);
  });
});

describe("the admin token never leaves the Worker", () => {
  it("Should refuse a model or pass-through request that carries the admin token, before anything reaches an upstream", async () => {
    const sent: string[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
      sent.push(new Request(input, init).url);
      return Response.json({ data: [] });
    });
    const chat = { model: "m", messages: [{ role: "user", content: "hi" }] };
    const requests: Array<[string, string, Record<string, string>, unknown?]> = [
      ["POST", "/v1/chat/completions", { authorization: "Bearer test-admin-token" }, chat],
      ["POST", "/v1/messages", { "x-api-key": "test-admin-token", "anthropic-version": "2023-06-01" }, { model: "c", max_tokens: 8, messages: chat.messages }],
      ["GET", "/v1/models", { authorization: "Bearer test-admin-token" }],
      ["GET", "/v1beta/models?key=test-admin-token", {}],
    ];
    for (const [method, path, headers, body] of requests) {
      const res = await exports.default.fetch(
        new Request(`http://mm.test${path}`, {
          method,
          headers: { "content-type": "application/json", ...headers },
          body: body === undefined ? undefined : JSON.stringify(body),
        }),
      );
      await res.arrayBuffer();
      expect(res.status, path).toBe(401);
    }
    expect(sent).toEqual([]);
  });
});
