import { env, exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { api } from "./api-helpers";
import { callWorker } from "./faults.support";
import { eventually, uniqueModel } from "./helpers";
import { completion } from "./upstream-stub";

/**
 * Tenancy hunt, second round (docs/reliability.md, "Tenancy"): one credential spelled two ways, credentials in
 * the query, what the upstream sets in a browser, and what an unreachable upstream's error names. Each case
 * here failed before its fix, unless it says it pins what already held.
 */

afterEach(() => vi.restoreAllMocks());

const ask = (model: string) => ({ model, messages: [{ role: "user", content: "whose answer is this?" }] });
const upstreamOrigin = new URL(String(env.UPSTREAM_BASE_URL)).origin;

/** A model request to `path` with exactly `headers` (and `search`), its body read. */
async function send(body: unknown, headers: Record<string, string>, search = "", path = "/v1/chat/completions"): Promise<Response> {
  const res = await exports.default.fetch(
    new Request(`http://mm.test${path}${search}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    }),
  );
  await res.arrayBuffer();
  return res;
}

const onlyIfCached = { "cache-control": "only-if-cached" };

/** Waits until `headers` are served `body` from the cache. */
async function recordedFor(body: unknown, headers: Record<string, string>, search = "", path?: string): Promise<void> {
  await eventually(async () => (await send(body, { ...headers, ...onlyIfCached }, search, path)).headers.get("muscle-mem-cache") === "hit");
}

/**
 * From now until the mocks are restored, every model POST to the test upstream is answered with a chat
 * completion and `headers` (what a real upstream sets: cookies, CORS); returns what each one received.
 */
function upstreamSaw(headers: Record<string, string> = {}): Array<{ authorization: string | null; url: string }> {
  const seen: Array<{ authorization: string | null; url: string }> = [];
  const real = globalThis.fetch;
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    if (url.origin !== upstreamOrigin || url.pathname.startsWith("/__")) return real(input, init);
    if (request.method === "POST") seen.push({ authorization: request.headers.get("authorization"), url: url.pathname + url.search });
    const body = request.method === "GET" ? { object: "list", data: [] } : completion({ role: "assistant", content: "recorded" });
    return Response.json(body, { headers });
  });
  return seen;
}

describe("one credential spelled two ways is one tenant (RFC 9110: the scheme is case-insensitive)", () => {
  it("Should serve a recording made with `bearer  <key>` to `Bearer <key>` and `BEARER <key>`, forwarding what the client sent, and never to another key", async () => {
    const key = `sk-${crypto.randomUUID()}`;
    const model = uniqueModel("echo");
    const seen = upstreamSaw();
    const first = await send(ask(model), { authorization: `bearer  ${key}` });
    expect(first.headers.get("muscle-mem-cache")).toBe("miss");
    // The upstream gets the header as the client wrote it: the Worker only reads it as one credential.
    expect(seen.map((s) => s.authorization)).toEqual([`bearer  ${key}`]);
    await recordedFor(ask(model), { authorization: `bearer  ${key}` });
    for (const spelled of [`Bearer ${key}`, `BEARER ${key}`, `Bearer \t ${key}`]) {
      const res = await send(ask(model), { authorization: spelled, ...onlyIfCached });
      expect(res.headers.get("muscle-mem-cache"), spelled).toBe("hit");
    }
    for (const other of [`bearer ${key.toUpperCase()}`, `bearer ${key}x`, `bearer x${key}`]) {
      const res = await send(ask(model), { authorization: other, ...onlyIfCached });
      expect(res.status, other).toBe(504);
    }
  });
});

describe("a cookie the upstream may read (Cloudflare Access's CF_Authorization session)", () => {
  it("Should never serve one session's recording to another behind the same placeholder Authorization, nor list it to the placeholder", async () => {
    const placeholder = { authorization: "Bearer sk-placeholder-cookie" };
    const model = uniqueModel("echo");
    const [one, two] = [`CF_Authorization=${crypto.randomUUID()}`, `CF_Authorization=${crypto.randomUUID()}`];
    expect((await send(ask(model), { ...placeholder, cookie: one })).headers.get("muscle-mem-cache")).toBe("miss");
    await recordedFor(ask(model), { ...placeholder, cookie: one });
    expect((await send(ask(model), { ...placeholder, cookie: two, ...onlyIfCached })).status).toBe(504);
    expect((await send(ask(model), { ...placeholder, ...onlyIfCached })).status).toBe(504);
    const listed = (await (await api("/trees", { token: "sk-placeholder-cookie" })).json()) as { data: Array<{ model: string }> };
    expect(listed.data.map((t) => t.model)).not.toContain(model);
  });
});

describe("a gateway key in the query (Kong key-auth reads ?apikey= by default)", () => {
  it("Should not list one consumer's tree to the placeholder Authorization every consumer sends", async () => {
    const placeholder = { authorization: "Bearer sk-placeholder-kong" };
    const model = uniqueModel("echo");
    const consumer = `?apikey=kong-${crypto.randomUUID()}`;
    expect((await send(ask(model), placeholder, consumer)).headers.get("muscle-mem-cache")).toBe("miss");
    await recordedFor(ask(model), placeholder, consumer);
    expect((await send(ask(model), { ...placeholder, ...onlyIfCached }, `?apikey=kong-${crypto.randomUUID()}`)).status).toBe(504);
    const listed = (await (await api("/trees", { token: "sk-placeholder-kong" })).json()) as { data: Array<{ model: string }> };
    expect(listed.data.map((t) => t.model)).not.toContain(model);
  });
});

describe("a credential in the query is part of the tenant on every route", () => {
  // Forwarded as the client sent it (an OpenAI-compatible upstream may read it; docs/reliability.md, "Tenancy"),
  // so it splits the tenant beside the route's own key. Pins what already held.
  const routes: Array<[name: string, path: string, headers: (key: string) => Record<string, string>, body: (model: string) => unknown]> = [
    ["chat", "/v1/chat/completions", (k) => ({ authorization: `Bearer ${k}` }), ask],
    [
      "Messages",
      "/v1/messages",
      (k) => ({ "x-api-key": k, "anthropic-version": "2023-06-01" }),
      (model) => ({ model, max_tokens: 16, messages: [{ role: "user", content: "whose answer is this?" }] }),
    ],
  ];
  for (const [name, path, headers, body] of routes) {
    it(`Should never serve a recording made with ?key=A beside a route key to ?key=B or no ?key= with the same route key (${name})`, async () => {
      const key = `sk-${crypto.randomUUID()}`;
      const model = uniqueModel("echo");
      const [a, b] = [`qa-${crypto.randomUUID()}`, `qb-${crypto.randomUUID()}`];
      const first = await send(body(model), headers(key), `?key=${a}`, path);
      expect(first.status).toBe(200);
      await recordedFor(body(model), headers(key), `?key=${a}`, path);
      for (const search of [`?key=${b}`, "", `?key=${a}&key=${b}`]) {
        const res = await send(body(model), { ...headers(key), ...onlyIfCached }, search, path);
        expect(res.status, search).toBe(504);
      }
    });
  }
});

describe("what an upstream sets in a browser", () => {
  const setByUpstream = {
    "set-cookie": "__cf_bm=upstream-session; path=/; HttpOnly",
    "access-control-allow-origin": "*",
    "access-control-expose-headers": "x-request-id",
    "x-request-id": "req-upstream",
  };

  it("Should relay no set-cookie and no access-control-* header on a miss, a bypass or a pass-through (a hit never had them)", async () => {
    upstreamSaw(setByUpstream);
    const model = uniqueModel("echo");
    const relayed = [
      ["miss", await send(ask(model), { authorization: `Bearer sk-${crypto.randomUUID()}` })],
      ["bypass", await send(ask(model), {})],
      ["pass-through", await exports.default.fetch(new Request("http://mm.test/v1/models", { headers: { authorization: "Bearer sk-cookie" } }))],
    ] as const;
    for (const [what, res] of relayed) {
      expect(res.status, what).toBe(200);
      expect(res.headers.get("set-cookie"), what).toBeNull();
      expect(
        [...res.headers.keys()].filter((h) => h.startsWith("access-control-")),
        what,
      ).toEqual([]);
      // The upstream's other headers are still relayed.
      expect(res.headers.get("x-request-id") === null, what).toBe(false);
    }
  });
});

describe("the error of an unreachable upstream", () => {
  it("Should name the upstream's scheme and host only: never an AI Gateway account id in its path, a query key or userinfo", async () => {
    // Port 1 on loopback: nothing listens, the connection is refused.
    const base = "http://operator:pw-secret-1@127.0.0.1:1/v1/acct-0123456789abcdef/my-gateway/openai";
    const logged: string[] = [];
    for (const level of ["log", "warn", "error"] as const) vi.spyOn(console, level).mockImplementation((line: unknown) => void logged.push(String(line)));
    for (const path of ["/v1/chat/completions?api-version=1&key=qs-secret-2", "/v1/models?key=qs-secret-2"]) {
      const call = await callWorker(
        new Request(`http://mm.test${path}`, {
          method: path.includes("chat") ? "POST" : "GET",
          headers: { "content-type": "application/json", authorization: "Bearer sk-unreachable" },
          body: path.includes("chat") ? JSON.stringify(ask(uniqueModel("echo"))) : undefined,
        }),
        { UPSTREAM_BASE_URL: base },
      );
      const text = await call.res.text();
      await call.settled();
      expect(call.res.status, path).toBe(502);
      expect(text).toContain("http://127.0.0.1:1");
      for (const secret of ["acct-0123456789abcdef", "my-gateway", "pw-secret-1", "operator", "qs-secret-2"]) {
        expect(text, path).not.toContain(secret);
        expect(logged.join("\n"), path).not.toContain(secret);
      }
    }
    expect(logged.join("\n")).toContain("upstream_unreachable");
  });
});

describe("the admin token never leaves the Worker, however it is spelled", () => {
  it("Should refuse a model request that sends the admin token after a tab, a lower-case or another scheme, or in another as-sent header, before anything is forwarded", async () => {
    const sent: string[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
      sent.push(new Request(input, init).url);
      return Response.json(completion({ role: "assistant", content: "leaked" }));
    });
    const spellings: Array<Record<string, string>> = [
      { authorization: "Bearer\ttest-admin-token" },
      { authorization: "bearer  test-admin-token" },
      { authorization: "Token test-admin-token" },
      { authorization: "Bearer sk-placeholder", "proxy-authorization": "Bearer test-admin-token" },
      { authorization: "Bearer sk-placeholder", "cf-aig-authorization": "Bearer\ttest-admin-token" },
    ];
    for (const headers of spellings) {
      const res = await send(ask(uniqueModel("echo")), headers);
      expect(res.status, JSON.stringify(headers)).toBe(401);
    }
    expect(sent).toEqual([]);
  });
});
