import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import worker from "../../src/index";
import { tenantOf } from "../../src/core/hash";
import { forgetAccepted, keyClock } from "../../src/engine/key-freshness";
import { api, newKey, ok } from "./api-helpers";
import { chat, generations, recorded, uniqueModel } from "./helpers";

/** The Worker under `vars` on top of the test bindings (a config of its own), its background work awaited. */
async function call(request: Request, vars: Record<string, string>): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await worker.fetch(request, { ...env, ...vars } as Env, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

function chatRequest(body: unknown, headers: Record<string, string>): Request {
  return new Request("http://mm.test/v1/chat/completions", {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

function importRequest(key: string, body: string): Request {
  return new Request("http://mm.test/api/import", { method: "POST", headers: { authorization: `Bearer ${key}` }, body });
}

/** The URLs of the upstream requests that carried `x-test-tag: tag`. */
async function upstreamUrls(tag: string): Promise<string[]> {
  return (await (await fetch(`${env.UPSTREAM_TEST_URL}/__urls?tag=${tag}`)).json()) as string[];
}

const FRESH_MS = 900_000;

afterEach(() => {
  keyClock.now = () => Date.now();
  forgetAccepted();
});

describe("import grants: POST /api/import needs the admin token or an explicit grant", () => {
  it("Should refuse a key's own import with 403 by default, storing nothing, and accept it with its tenant in IMPORT_TENANTS or *", async () => {
    const key = newKey();
    const model = uniqueModel();
    const line = JSON.stringify({
      model,
      messages: [
        { role: "user", content: "seed me" },
        { role: "assistant", content: "seeded" },
      ],
    });
    const refused = await call(importRequest(key, line), {});
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("forbidden");
    const notSeeded = await chat({ model, messages: [{ role: "user", content: "seed me" }] }, { key, headers: { "cache-control": "only-if-cached" } });
    expect(notSeeded.status).toBe(504);
    // Another tenant's grant is not this one's.
    expect((await call(importRequest(key, line), { IMPORT_TENANTS: tenantOf(`Bearer ${newKey()}`) })).status).toBe(403);
    const granted = await call(importRequest(key, line), { IMPORT_TENANTS: `${tenantOf("Bearer other")}, ${tenantOf(`Bearer ${key}`)}` });
    expect(granted.status).toBe(200);
    expect(await granted.json()).toMatchObject({ lines: 1, answers: 1, tenant: tenantOf(`Bearer ${key}`) });
    const served = await chat({ model, messages: [{ role: "user", content: "seed me" }] }, { key });
    expect(served.headers.get("muscle-mem-cache")).toBe("hit");
    expect((await call(importRequest(newKey(), line), { IMPORT_TENANTS: "*" })).status).toBe(200);
  });

  it("Should still let the admin token seed any named tenant without a grant", async () => {
    const key = newKey();
    const line = JSON.stringify({
      model: uniqueModel(),
      messages: [
        { role: "user", content: "a" },
        { role: "assistant", content: "b" },
      ],
    });
    const seeded = await ok<{ tenant: string }>(api(`/import?tenant=${tenantOf(`Bearer ${key}`)}`, { method: "POST", body: line }));
    expect(seeded.tenant).toBe(tenantOf(`Bearer ${key}`));
  });

  it("Should key import lines that arrive split across body chunks, a line and a character cut in two", async () => {
    const key = newKey();
    const model = uniqueModel();
    const lines = ["ü first", "second"]
      .map((q) =>
        JSON.stringify({
          model,
          messages: [
            { role: "user", content: q },
            { role: "assistant", content: `re ${q}` },
          ],
        }),
      )
      .join("\n");
    const bytes = new TextEncoder().encode(lines);
    const cut = bytes.indexOf(0xc3) + 1;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const part of [bytes.slice(0, cut), bytes.slice(cut, cut + 40), bytes.slice(cut + 40)]) controller.enqueue(part);
        controller.close();
      },
    });
    const res = await exports.default.fetch(
      new Request(`http://mm.test/api/import?tenant=${tenantOf(`Bearer ${key}`)}`, {
        method: "POST",
        headers: { authorization: "Bearer test-admin-token" },
        body,
      }),
    );
    expect(await ok(res)).toMatchObject({ lines: 2, answers: 2 });
    const hit = await chat({ model, messages: [{ role: "user", content: "ü first" }] }, { key });
    expect(hit.headers.get("muscle-mem-cache")).toBe("hit");
  });
});

describe("keys the provider still accepts (KEY_FRESH_MS)", () => {
  it("Should stop serving a revoked key's hits once its provider last accepted it KEY_FRESH_MS ago, relay the provider's 401, and stop its API reads", async () => {
    let now = 1_000_000_000;
    keyClock.now = () => now;
    forgetAccepted();
    const key = newKey();
    const model = uniqueModel();
    const body = { model, messages: [{ role: "user", content: "Refund order #A-1 please" }] };
    const miss = await chat(body, { key });
    expect(miss.headers.get("muscle-mem-cache")).toBe("miss");
    await recorded(body, { key });
    await fetch(`${env.UPSTREAM_TEST_URL}/__revoke`, { method: "POST", body: key });
    // Within the bound the hit is served (the provider is not asked: hits never reach it).
    now += FRESH_MS - 1;
    const stillServed = await chat(body, { key });
    expect(stillServed.headers.get("muscle-mem-cache")).toBe("hit");
    expect((await api("/trees", { token: key })).status).toBe(200);
    const before = await generations(model);
    // At the bound: the stale key is re-checked, the provider refuses it, and the request goes to the model.
    now += 1;
    const refused = await chat(body, { key });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("muscle-mem-cache")).toBe("miss");
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("invalid_api_key");
    expect(await generations(model)).toBe(before);
    const cachedOnly = await chat(body, { key, headers: { "cache-control": "only-if-cached" } });
    expect(cachedOnly.status).toBe(504);
    const trees = await api("/trees", { token: key });
    expect(trees.status).toBe(401);
    // The same request under a key the provider accepts is its own tenant: nothing leaks across.
    const other = await chat(body, { key: newKey(), headers: { "cache-control": "only-if-cached" } });
    expect(other.status).toBe(504);
  });

  it("Should re-check a stale key with one model-list call, serve the hit when the provider accepts it, and not ask again within the bound", async () => {
    let now = 2_000_000_000;
    keyClock.now = () => now;
    forgetAccepted();
    const key = newKey();
    const tag = `fresh-${crypto.randomUUID()}`;
    const model = uniqueModel();
    const body = { model, messages: [{ role: "user", content: "Refund order #A-2 please" }] };
    const models = async () => (await upstreamUrls(tag)).filter((u) => u.startsWith("/v1/models")).length;
    // A miss has nothing to serve: the provider is not asked before it (its answer is the check).
    await (await chat(body, { key, headers: { "x-test-tag": tag } })).arrayBuffer();
    expect(await models()).toBe(0);
    await recorded(body, { key });
    now += FRESH_MS;
    // Another isolate's memory: only D1 knows when the key was last accepted.
    forgetAccepted();
    const hit = await chat(body, { key, headers: { "x-test-tag": tag } });
    expect(hit.headers.get("muscle-mem-cache")).toBe("hit");
    expect(await models()).toBe(1);
    now += FRESH_MS - 1;
    forgetAccepted();
    const again = await chat(body, { key, headers: { "x-test-tag": tag } });
    expect(again.headers.get("muscle-mem-cache")).toBe("hit");
    // Read from D1 (the check's write), not asked again.
    expect(await models()).toBe(1);
  });

  it("Should serve every hit without a check when KEY_FRESH_MS is 0", async () => {
    const key = `sk-revoked-${crypto.randomUUID()}`;
    const model = uniqueModel();
    const line = JSON.stringify({
      model,
      messages: [
        { role: "user", content: "q" },
        { role: "assistant", content: "a" },
      ],
    });
    await ok(api(`/import?tenant=${tenantOf(`Bearer ${key}`)}`, { method: "POST", body: line }));
    const unchecked = await call(chatRequest({ model, messages: [{ role: "user", content: "q" }] }, { authorization: `Bearer ${key}` }), { KEY_FRESH_MS: "0" });
    expect(unchecked.headers.get("muscle-mem-cache")).toBe("hit");
    const checked = await chat({ model, messages: [{ role: "user", content: "q" }] }, { key });
    expect([checked.status, checked.headers.get("muscle-mem-cache")]).toEqual([401, "miss"]);
  });
});

describe("who may use the Worker: WORKER_TOKEN and ALLOWED_TENANTS", () => {
  it("Should refuse a model request without the Worker credential before it reaches the upstream, and pass one with it", async () => {
    const model = uniqueModel();
    const body = { model, messages: [{ role: "user", content: "hello" }] };
    const vars = { WORKER_TOKEN: "worker-secret" };
    const none = await call(chatRequest(body, { authorization: `Bearer ${newKey()}` }), vars);
    expect(none.status).toBe(401);
    expect(((await none.json()) as { error: { param: string } }).error.param).toBe("muscle-mem-authorization");
    const wrong = await call(chatRequest(body, { authorization: `Bearer ${newKey()}`, "muscle-mem-authorization": "Bearer nope" }), vars);
    expect(wrong.status).toBe(401);
    expect(await generations(model)).toBe(0);
    const passed = await call(chatRequest(body, { authorization: `Bearer ${newKey()}`, "muscle-mem-authorization": "Bearer worker-secret" }), vars);
    expect(passed.status).toBe(200);
    expect(await generations(model)).toBe(1);
    // The scheme and its token apart by a tab, as the provider key's own `Authorization` may be (RFC 9110).
    const tabbed = await call(
      chatRequest(
        { ...body, messages: [{ role: "user", content: "hello, tab" }] },
        { authorization: `Bearer ${newKey()}`, "muscle-mem-authorization": "bearer\tworker-secret" },
      ),
      vars,
    );
    expect(tabbed.status).toBe(200);
    expect(await generations(model)).toBe(2);
    // Gemini's routes answer in Gemini's envelope; the API's tenant keys need it too, the admin token does not.
    const gemini = await call(
      new Request("http://mm.test/v1beta/models/m:generateContent", { method: "POST", headers: { "x-goog-api-key": newKey() }, body: "{}" }),
      vars,
    );
    expect(gemini.status).toBe(401);
    expect(((await gemini.json()) as { error: { status: string } }).error.status).toBe("UNAUTHENTICATED");
    expect((await call(new Request("http://mm.test/api/trees", { headers: { authorization: `Bearer ${newKey()}` } }), vars)).status).toBe(401);
    expect((await call(new Request("http://mm.test/api/trees", { headers: { authorization: "Bearer test-admin-token" } }), vars)).status).toBe(200);
  });

  it("Should serve only the tenants on ALLOWED_TENANTS: 403 for another key, 401 for none", async () => {
    const allowed = newKey();
    const vars = { ALLOWED_TENANTS: tenantOf(`Bearer ${allowed}`) };
    const body = { model: uniqueModel(), messages: [{ role: "user", content: "hi" }] };
    expect((await call(chatRequest(body, { authorization: `Bearer ${allowed}` }), vars)).status).toBe(200);
    expect((await call(chatRequest(body, { authorization: `Bearer ${newKey()}` }), vars)).status).toBe(403);
    expect((await call(chatRequest(body, {}), vars)).status).toBe(401);
    expect((await call(new Request("http://mm.test/api/trees", { headers: { authorization: `Bearer ${newKey()}` } }), vars)).status).toBe(403);
  });
});
