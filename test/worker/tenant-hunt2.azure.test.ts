import { afterEach, describe, expect, it, vi } from "vitest";
import { forgetAccepted, keyClock } from "../../src/engine/key-freshness";
import { callWorker } from "./faults.support";
import { eventually, uniqueModel } from "./helpers";
import { completion } from "./upstream-stub";

/**
 * Key freshness (KEY_FRESH_MS) against an Azure OpenAI deployment base: the scripted upstream here plays Azure,
 * which answers a deployment's `…/deployments/x/models` 404, lists the resource's models at
 * `{resource}/openai/models?api-version=…` for its `api-key`, and refuses an API key sent as `Authorization:
 * Bearer` (Azure reads a bearer token as an Entra token). Each case here failed before its fix.
 */

const FRESH_MS = 900_000;
const RESOURCE = "https://hunt.openai.azure.com";
const vars = { UPSTREAM_BASE_URL: `${RESOURCE}/openai/deployments/gpt-hunt` };

afterEach(() => {
  vi.restoreAllMocks();
  keyClock.now = () => Date.now();
  forgetAccepted();
});

/** Azure, scripted: the keys it accepts, and every call it received (method and path with query). */
function playAzure(accepted: Set<string>): string[] {
  const calls: string[] = [];
  const real = globalThis.fetch;
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    if (url.origin !== RESOURCE) return real(input, init);
    calls.push(`${request.method} ${url.pathname}${url.search}`);
    const key = request.headers.get("api-key");
    if (!url.searchParams.get("api-version")) return Response.json({ error: { code: "404", message: "Resource not found" } }, { status: 404 });
    const route = `${request.method} ${url.pathname}`;
    const known = route === "GET /openai/models" || route === "POST /openai/deployments/gpt-hunt/chat/completions";
    if (!known) return Response.json({ error: { code: "404", message: "Resource not found" } }, { status: 404 });
    if (key === null || !accepted.has(key))
      return Response.json({ error: { code: "401", message: "Access denied due to invalid subscription key." } }, { status: 401 });
    if (request.method === "GET") return Response.json({ object: "list", data: [{ id: "gpt-4o", object: "model" }] });
    return Response.json(completion({ role: "assistant", content: "from Azure" }));
  });
  return calls;
}

const ask = (model: string) => ({ model, messages: [{ role: "user", content: "still accepted?" }] });

/** A chat request to the Worker (Azure's client: `api-key` and `?api-version=`), its body read. */
async function chat(model: string, key: string, extra: Record<string, string> = {}): Promise<Response> {
  const call = await callWorker(
    new Request("http://mm.test/v1/chat/completions?api-version=2024-10-21", {
      method: "POST",
      headers: { "content-type": "application/json", "api-key": key, ...extra },
      body: JSON.stringify(ask(model)),
    }),
    vars,
  );
  await call.res.arrayBuffer();
  await call.settled();
  return call.res;
}

/** Records `model`'s answer for `key` and waits until it is served. */
async function recordedAt(model: string, key: string): Promise<void> {
  expect((await chat(model, key)).headers.get("muscle-mem-cache")).toBe("miss");
  await eventually(async () => (await chat(model, key, { "cache-control": "only-if-cached" })).headers.get("muscle-mem-cache") === "hit");
}

const modelCalls = (calls: string[]) => calls.filter((c) => c.startsWith("POST ")).length;

describe("key freshness at an Azure OpenAI deployment", () => {
  it("Should serve a hit after KEY_FRESH_MS by checking the key at the resource's model list, without a model call", async () => {
    let now = 7_000_000_000;
    keyClock.now = () => now;
    const key = crypto.randomUUID().replaceAll("-", "");
    const calls = playAzure(new Set([key]));
    const model = uniqueModel("azure");
    await recordedAt(model, key);
    const generated = modelCalls(calls);
    now += FRESH_MS;
    const later = await chat(model, key);
    expect(later.headers.get("muscle-mem-cache")).toBe("hit");
    expect(modelCalls(calls)).toBe(generated);
    expect(calls).toContain("GET /openai/models?api-version=2024-10-21");
  });

  it("Should stop serving a key Azure no longer accepts (the check's 401 sends the request to the model, which refuses it)", async () => {
    let now = 8_000_000_000;
    keyClock.now = () => now;
    const key = crypto.randomUUID().replaceAll("-", "");
    const accepted = new Set([key]);
    playAzure(accepted);
    const model = uniqueModel("azure");
    await recordedAt(model, key);
    accepted.delete(key);
    now += FRESH_MS;
    const later = await chat(model, key);
    expect(later.headers.get("muscle-mem-cache")).not.toBe("hit");
    expect(later.status).toBe(401);
  });

  it("Should let the key read its tenant through /api after KEY_FRESH_MS: checked with api-key at the resource's model list", async () => {
    let now = 9_000_000_000;
    keyClock.now = () => now;
    const key = crypto.randomUUID().replaceAll("-", "");
    const calls = playAzure(new Set([key]));
    await recordedAt(uniqueModel("azure"), key);
    now += FRESH_MS;
    forgetAccepted();
    const call = await callWorker(new Request("http://mm.test/api/trees", { headers: { authorization: `Bearer ${key}` } }), vars);
    await call.res.arrayBuffer();
    expect(call.res.status).toBe(200);
    expect(calls.at(-1)).toBe("GET /openai/models?api-version=2024-10-21");
  });
});
