import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { eventually, generations, uniqueModel } from "./helpers";
import { messageRecorded, postMessages } from "./messages.support";

/**
 * The key over HTTP, outside the body: a request is recorded, then the same body with
 * one thing the upstream reads outside the body changed (the query string,
 * an account header) must not be served from that recording.
 */

async function post(path: string, body: unknown, headers: Record<string, string>): Promise<Response> {
  return exports.default.fetch(
    new Request(`http://mm.test${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) }),
  );
}

/** The cache outcome of a request asked with only-if-cached: 200 (a hit) or 504 (nothing to serve). */
async function cachedStatus(path: string, body: unknown, headers: Record<string, string>): Promise<number> {
  const res = await post(path, body, { ...headers, "cache-control": "only-if-cached" });
  await res.arrayBuffer();
  return res.status;
}

describe("the key over HTTP: what the upstream reads outside the body", () => {
  it("Should not serve a chat answer recorded for another ?api-version= or another OpenAI-Project", async () => {
    const model = uniqueModel("echo");
    const body = { model, messages: [{ role: "user", content: "which api version answers?" }] };
    const headers = { "api-key": "sk-outside-body-chat", "openai-project": "proj_a" };
    const path = "/v1/chat/completions?api-version=2024-10-21";
    const first = await post(path, body, headers);
    expect(first.headers.get("muscle-mem-cache")).toBe("miss");
    await first.arrayBuffer();
    await eventually(async () => (await cachedStatus(path, body, headers)) === 200);
    expect(await cachedStatus("/v1/chat/completions?api-version=2025-04-01-preview", body, headers)).toBe(504);
    expect(await cachedStatus("/v1/chat/completions", body, headers)).toBe(504);
    expect(await cachedStatus(path, body, { ...headers, "openai-project": "proj_b" })).toBe(504);
    expect(await cachedStatus(path, body, { "api-key": headers["api-key"] })).toBe(504);
    expect(await generations(model)).toBe(1);
  });

  it("Should not serve a Messages answer recorded for another anthropic-workspace-id", async () => {
    const body = { model: uniqueModel("echo"), max_tokens: 16, messages: [{ role: "user", content: "which workspace answers?" }] };
    const init = { key: "sk-ant-outside-body", headers: { "anthropic-workspace-id": "wrkspc_a" } };
    await (await postMessages(body, init)).arrayBuffer();
    await messageRecorded(body, init);
    const other = await postMessages(body, { ...init, headers: { "anthropic-workspace-id": "wrkspc_b", "cache-control": "only-if-cached" } });
    await other.arrayBuffer();
    expect(other.status).toBe(504);
  });

  it("Should pass chat's web_search_options through, marked bypass", async () => {
    const res = await post(
      "/v1/chat/completions",
      { model: uniqueModel("echo"), messages: [{ role: "user", content: "news today?" }], web_search_options: {} },
      { authorization: "Bearer sk-outside-body-search" },
    );
    await res.arrayBuffer();
    expect(res.headers.get("muscle-mem-cache")).toBe("bypass");
  });
});
