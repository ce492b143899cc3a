import { exports } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { api } from "./api-helpers";
import { callWorker } from "./faults.support";
import { eventually, generations, uniqueModel } from "./helpers";

/** A chat-completions request with exactly these headers (no default credential) and this query string. */
function chatWith(body: unknown, headers: Record<string, string>, search = ""): Request {
  return new Request(`http://mm.test/v1/chat/completions${search}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

async function send(body: unknown, headers: Record<string, string>, search = ""): Promise<Response> {
  const res = await exports.default.fetch(chatWith(body, headers, search));
  await res.arrayBuffer();
  return res;
}

/** Waits until these credentials are served the request from the cache. */
async function recordedFor(body: unknown, headers: Record<string, string>, search = ""): Promise<void> {
  await eventually(async () => (await send(body, { ...headers, "cache-control": "only-if-cached" }, search)).status === 200);
}

const ask = (model: string, text = "which tenant am I?") => ({ model, messages: [{ role: "user", content: text }] });

describe("the tenant is the credential the upstream reads", () => {
  const credentialKinds: Array<[name: string, headers: (key: string) => Record<string, string>, search?: (key: string) => string]> = [
    ["Azure api-key", (key) => ({ "api-key": key })],
    ["x-api-key", (key) => ({ "x-api-key": key })],
    ["Gemini x-goog-api-key", (key) => ({ "x-goog-api-key": key })],
    ["Gemini key query parameter", () => ({}), (key) => `?key=${key}`],
    ["AI Gateway cf-aig-authorization (keys stored in the gateway)", (key) => ({ "cf-aig-authorization": `Bearer ${key}` })],
    ["Azure API Management ocp-apim-subscription-key", (key) => ({ "ocp-apim-subscription-key": key })],
  ];
  for (const [name, headers, search = () => ""] of credentialKinds) {
    it(`Should give each ${name} its own tenant: the owner hits, another key and no key are never served the recording`, async () => {
      const model = uniqueModel("echo");
      const owner = `sk-owner-${crypto.randomUUID().slice(0, 8)}`;
      const first = await send(ask(model), headers(owner), search(owner));
      expect(first.headers.get("muscle-mem-cache")).toBe("miss");
      await recordedFor(ask(model), headers(owner), search(owner));
      expect((await send(ask(model), headers(owner), search(owner))).headers.get("muscle-mem-cache")).toBe("hit");
      const other = await send(ask(model), { ...headers("sk-wrong-key"), "cache-control": "only-if-cached" }, search("sk-wrong-key"));
      expect(other.status).toBe(504);
      const anonymous = await send(ask(model), { "cache-control": "only-if-cached" });
      expect(anonymous.status).toBe(504);
      const bearerOther = await send(ask(model), { authorization: "Bearer sk-test-default", "cache-control": "only-if-cached" });
      expect(bearerOther.status).toBe(504);
    });

    it(`Should show the trees a ${name} built to /api with Authorization: Bearer <the same key>`, async () => {
      const model = uniqueModel("echo");
      const owner = `sk-lister-${crypto.randomUUID().slice(0, 8)}`;
      await send(ask(model), headers(owner), search(owner));
      await recordedFor(ask(model), headers(owner), search(owner));
      const own = (await (await api("/trees", { token: owner })).json()) as { data: Array<{ model: string }> };
      expect(own.data.map((t) => t.model)).toContain(model);
      const other = (await (await api("/trees", { token: "sk-someone-else" })).json()) as { data: Array<{ model: string }> };
      expect(other.data.map((t) => t.model)).not.toContain(model);
    });
  }

  it("Should give api-key and x-api-key the tenant of Authorization: Bearer <key>, the same key being one owner", async () => {
    const model = uniqueModel("echo");
    const key = `sk-same-${crypto.randomUUID().slice(0, 8)}`;
    await send(ask(model), { authorization: `Bearer ${key}` });
    await recordedFor(ask(model), { authorization: `Bearer ${key}` });
    expect((await send(ask(model), { "api-key": key })).headers.get("muscle-mem-cache")).toBe("hit");
    expect((await send(ask(model), { "x-api-key": key })).headers.get("muscle-mem-cache")).toBe("hit");
  });

  it("Should key a request that carries several different credentials under all of them", async () => {
    const model = uniqueModel("echo");
    const both = { authorization: "Bearer sk-proxy-a", "api-key": "sk-azure-b" };
    await send(ask(model), both);
    await recordedFor(ask(model), both);
    const singles: Array<Record<string, string>> = [
      { authorization: "Bearer sk-proxy-a" },
      { "api-key": "sk-azure-b" },
      { authorization: "Bearer sk-proxy-a", "api-key": "sk-azure-c" },
    ];
    for (const one of singles) {
      expect((await send(ask(model), { ...one, "cache-control": "only-if-cached" })).status).toBe(504);
    }
    // The order of the headers does not matter.
    expect((await send(ask(model), { "api-key": "sk-azure-b", authorization: "Bearer sk-proxy-a" })).headers.get("muscle-mem-cache")).toBe("hit");
  });

  it("Should never let one ?key= value stand for several credentials: a key no header could carry (a line break) is not cached", async () => {
    const model = uniqueModel("echo");
    const both = { authorization: "Bearer sk-proxy-a", "api-key": "sk-azure-b" };
    await send(ask(model), both);
    await recordedFor(ask(model), both);
    // The two headers above are keyed by "Bearer sk-azure-b\nBearer sk-proxy-a" (sorted): one query value must not be that tenant.
    const joined = "?key=sk-azure-b%0ABearer%20sk-proxy-a";
    expect((await send(ask(model), { "cache-control": "only-if-cached" }, joined)).status).toBe(504);
    for (const search of [joined, "?key=sk-x%0D", "?key=sk-x%00"]) {
      expect([search, (await send(ask(model), {}, search)).headers.get("muscle-mem-cache")]).toEqual([search, "bypass"]);
    }
  });
});

describe("a request without a credential", () => {
  it("Should be passed through and never cached: bypass every time, only-if-cached is a 504", async () => {
    const model = uniqueModel("echo");
    for (let i = 0; i < 2; i++) {
      const res = await send(ask(model), {});
      expect(res.status).toBe(200);
      expect(res.headers.get("muscle-mem-cache")).toBe("bypass");
    }
    expect((await send(ask(model), { "cache-control": "only-if-cached" })).status).toBe(504);
    expect(await generations(model)).toBe(2);
    const empty = await send(ask(model), { authorization: "", "api-key": "" });
    expect(empty.headers.get("muscle-mem-cache")).toBe("bypass");
  });

  it("Should treat an authorization scheme with no token (an unset key: 'Bearer ', 'Basic') as no credential, never a shared tenant", async () => {
    const model = uniqueModel("echo");
    for (const authorization of ["Bearer ", "Bearer    ", "bearer", "Basic ", "Token"]) {
      for (const name of ["authorization", "proxy-authorization", "cf-aig-authorization"]) {
        const res = await send(ask(model), { [name]: authorization });
        expect([name, authorization, res.headers.get("muscle-mem-cache")]).toEqual([name, authorization, "bypass"]);
      }
    }
    // Two clients with an unset key never share a recording.
    expect((await send(ask(model), { authorization: "Bearer ", "cache-control": "only-if-cached" })).status).toBe(504);
  });

  it("Should count it as a bypass with the reason 'no credential' in the request log", async () => {
    const lines: string[] = [];
    const spy = vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(" ")));
    try {
      await send(ask(uniqueModel("echo")), {});
    } finally {
      spy.mockRestore();
    }
    const requests = lines
      .filter((l) => l.includes('"event":"request"'))
      .map((l) => JSON.parse(l) as { outcome: string; reason: string | null; tree?: string | null });
    expect(requests).toEqual([expect.objectContaining({ outcome: "bypass", reason: "no credential" })]);
    expect(requests[0].tree ?? null).toBeNull();
  });

  it("Should be passed through on the Messages route too", async () => {
    const model = uniqueModel("echo");
    const request = () =>
      new Request("http://mm.test/v1/messages", {
        method: "POST",
        headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
        body: JSON.stringify({ model, max_tokens: 16, messages: [{ role: "user", content: "no key" }] }),
      });
    for (let i = 0; i < 2; i++) {
      const res = await exports.default.fetch(request());
      await res.arrayBuffer();
      expect(res.headers.get("muscle-mem-cache")).toBe("bypass");
    }
    expect(await generations(model)).toBe(2);
  });

  it("Should be cached in a tenant of its own only when CACHE_ANONYMOUS is on", async () => {
    const model = uniqueModel("echo");
    const vars = { CACHE_ANONYMOUS: "on" };
    const first = await callWorker(chatWith(ask(model), {}), vars);
    expect(first.res.headers.get("muscle-mem-cache")).toBe("miss");
    await first.res.arrayBuffer();
    await first.settled();
    const again = await callWorker(chatWith(ask(model), {}), vars);
    expect(again.res.headers.get("muscle-mem-cache")).toBe("hit");
    await again.res.arrayBuffer();
    const keyed = await callWorker(chatWith(ask(model), { authorization: "Bearer sk-test-default", "cache-control": "only-if-cached" }), vars);
    expect(keyed.res.status).toBe(504);
    await keyed.res.arrayBuffer();
    // Off again: the anonymous tree is not read.
    expect((await send(ask(model), { "cache-control": "only-if-cached" })).status).toBe(504);
  });
});
