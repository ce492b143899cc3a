import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { generations, uniqueModel } from "./helpers";

/** The Worker with WORKER_TOKEN set: strangers are refused by the access gate. */
async function gated(request: Request): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await worker.fetch(request, { ...env, WORKER_TOKEN: "worker-secret" } as Env, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

function post(path: string, headers: Record<string, string>, body: unknown): Request {
  return new Request(`http://mm.test${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
}

describe("the access gate answers in the envelope of the route's own API", () => {
  it("Should refuse a stranger on Anthropic's /v1/messages in Anthropic's envelope, forwarding nothing", async () => {
    const model = uniqueModel();
    const res = await gated(
      post(
        "/v1/messages",
        { "x-api-key": "ak-stranger", "anthropic-version": "2023-06-01" },
        { model, max_tokens: 8, messages: [{ role: "user", content: "hi" }] },
      ),
    );
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ type: "error", error: { type: "authentication_error" } });
    expect(await generations(model)).toBe(0);
  });

  it("Should refuse Anthropic's other calls (anthropic-version) in Anthropic's envelope", async () => {
    const res = await gated(post("/v1/messages/count_tokens", { "x-api-key": "ak-stranger", "anthropic-version": "2023-06-01" }, {}));
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ type: "error", error: { type: "authentication_error" } });
  });

  it("Should refuse Gemini's stable /v1/ route in Gemini's envelope", async () => {
    const res = await gated(post("/v1/models/gemini-2.5-flash:generateContent", { "x-goog-api-key": "g-stranger" }, { contents: [] }));
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { status: string; code: number } }).error).toMatchObject({ status: "UNAUTHENTICATED", code: 401 });
  });

  it("Should keep OpenAI's envelope on chat and on the general /v1/* pass-through", async () => {
    for (const path of ["/v1/chat/completions", "/v1/embeddings"]) {
      const res = await gated(post(path, { authorization: "Bearer sk-stranger" }, { model: "m", input: "x" }));
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("unauthorized");
    }
  });
});
