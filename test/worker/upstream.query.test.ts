import { exports, env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { uniqueModel } from "./helpers";

/** The URLs (path and query) the test upstream received with `x-test-tag: tag`. */
async function urlsSeen(tag: string): Promise<string[]> {
  return (await (await fetch(`${env.UPSTREAM_TEST_URL}/__urls?tag=${tag}`)).json()) as string[];
}

async function post(path: string, body: unknown, headers: Record<string, string>): Promise<Response> {
  const res = await exports.default.fetch(
    new Request(`http://mm.test${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) }),
  );
  await res.arrayBuffer();
  return res;
}

describe("the client's query string reaches the upstream", () => {
  const chat = (model: string) => ({ model, messages: [{ role: "user", content: "azure wants api-version" }] });

  it("Should forward ?api-version= on a chat miss and on a bypass", async () => {
    const tag = crypto.randomUUID();
    const model = uniqueModel("echo");
    const headers = { "api-key": "sk-azure-query", "x-test-tag": tag };
    const miss = await post("/v1/chat/completions?api-version=2024-10-21", chat(model), headers);
    expect(miss.status).toBe(200);
    expect(miss.headers.get("muscle-mem-cache")).toBe("miss");
    const bypass = await post("/v1/chat/completions?api-version=2024-10-21", chat(model), { ...headers, "cache-control": "no-store" });
    expect(bypass.status).toBe(200);
    expect(bypass.headers.get("muscle-mem-cache")).toBe("bypass");
    expect(await urlsSeen(tag)).toEqual(["/v1/chat/completions?api-version=2024-10-21", "/v1/chat/completions?api-version=2024-10-21"]);
  });

  it("Should forward the query string on the Messages route and on pass-through routes", async () => {
    const tag = crypto.randomUUID();
    const messages = await post(
      "/v1/messages?beta=true",
      { model: uniqueModel("echo"), max_tokens: 16, messages: [{ role: "user", content: "q" }] },
      { "x-api-key": "sk-ant-query", "anthropic-version": "2023-06-01", "x-test-tag": tag },
    );
    expect(messages.status).toBe(200);
    const models = await exports.default.fetch(
      new Request("http://mm.test/v1/models?api-version=2024-10-21", { headers: { authorization: "Bearer sk-x", "x-test-tag": tag } }),
    );
    await models.arrayBuffer();
    expect(await urlsSeen(tag)).toEqual(["/v1/messages?beta=true", "/v1/models?api-version=2024-10-21"]);
  });
});
