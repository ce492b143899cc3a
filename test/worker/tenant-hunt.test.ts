import { env, exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { api } from "./api-helpers";
import { callWorker } from "./faults.support";
import { chatAsSent, eventually, uniqueModel } from "./helpers";

/**
 * Tenancy hunt (docs/reliability.md, "Tenancy"): where a credential can sit in a request, and whether the
 * tenant is always the credential the upstream will use. Each case here failed before its fix.
 */

afterEach(() => vi.restoreAllMocks());

const ask = (model: string) => ({ model, messages: [{ role: "user", content: "whose answer is this?" }] });

/** Sends a chat request with exactly `headers` (and `search`), its body read. */
async function send(body: unknown, headers: Record<string, string>, search = ""): Promise<Response> {
  const res =
    search === ""
      ? await chatAsSent(body, headers)
      : await exports.default.fetch(
          new Request(`http://mm.test/v1/chat/completions${search}`, {
            method: "POST",
            headers: { "content-type": "application/json", ...headers },
            body: JSON.stringify(body),
          }),
        );
  await res.arrayBuffer();
  return res;
}

/** Waits until `headers` are served `body` from the cache. */
async function recordedFor(body: unknown, headers: Record<string, string>, search = ""): Promise<void> {
  await eventually(async () => (await send(body, { ...headers, "cache-control": "only-if-cached" }, search)).headers.get("muscle-mem-cache") === "hit");
}

describe("credentials a gateway in front of the model reads", () => {
  // The same placeholder provider key for everyone: the gateway (Cloudflare Access, Azure API Management) holds the real one.
  const PLACEHOLDER = { authorization: "Bearer sk-placeholder" };

  const kinds: Array<[name: string, headers: (secret: string) => Record<string, string>, search?: (secret: string) => string]> = [
    [
      "Cloudflare Access service token (cf-access-client-id / cf-access-client-secret)",
      (s) => ({ "cf-access-client-id": `id-${s}.access`, "cf-access-client-secret": s }),
    ],
    ["Cloudflare Access token (cf-access-token)", (s) => ({ "cf-access-token": `jwt.${s}` })],
    ["Azure API Management subscription-key query parameter", () => ({}), (s) => `?subscription-key=${s}`],
    ["Kong gateway consumer key (apikey, key-auth's default)", (s) => ({ apikey: s })],
    ["Portkey config holding the provider key (x-portkey-config)", (s) => ({ "x-portkey-config": JSON.stringify({ provider: "openai", api_key: s }) })],
  ];
  for (const [name, headers, search = () => ""] of kinds) {
    it(`Should never serve one ${name}'s recording to another behind the same placeholder Authorization, nor list it to the placeholder`, async () => {
      const model = uniqueModel("echo");
      const one = crypto.randomUUID().slice(0, 12);
      const two = crypto.randomUUID().slice(0, 12);
      const first = await send(ask(model), { ...PLACEHOLDER, ...headers(one) }, search(one));
      expect(first.headers.get("muscle-mem-cache")).toBe("miss");
      await recordedFor(ask(model), { ...PLACEHOLDER, ...headers(one) }, search(one));
      const other = await send(ask(model), { ...PLACEHOLDER, ...headers(two), "cache-control": "only-if-cached" }, search(two));
      expect(other.status).toBe(504);
      // The placeholder alone is not the owner: /api with it does not show the tree.
      const listed = (await (await api("/trees", { token: "sk-placeholder" })).json()) as { data: Array<{ model: string }> };
      expect(listed.data.map((t) => t.model)).not.toContain(model);
    });
  }
});

describe("a request that carries a credential is never anonymous", () => {
  it("Should not cache a keyed request whose ?key= holds a line break in the anonymous tenant (CACHE_ANONYMOUS=on), nor serve it to a request with no key", async () => {
    const model = uniqueModel("echo");
    const vars = { CACHE_ANONYMOUS: "on" };
    const request = (headers: Record<string, string>, search = "") =>
      new Request(`http://mm.test/v1/chat/completions${search}`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify(ask(model)),
      });
    // A key the upstream reads in Authorization, beside a ?key= that cannot be one credential (it could spell several).
    const keyed = await callWorker(request({ authorization: `Bearer sk-${crypto.randomUUID()}` }, "?key=a%0Ab"), vars);
    await keyed.res.arrayBuffer();
    await keyed.settled();
    expect(keyed.res.headers.get("muscle-mem-cache")).toBe("bypass");
    const anonymous = await callWorker(request({ "cache-control": "only-if-cached" }), vars);
    await anonymous.res.arrayBuffer();
    expect(anonymous.res.status).toBe(504);
  });
});

describe("an upstream error that echoes the key", () => {
  it("Should keep the request's own key out of D1 when the upstream's error message quotes it (the request log keeps the message)", async () => {
    const key = `sk-echoed-${crypto.randomUUID()}`;
    const gateway = `pk-echoed-${crypto.randomUUID()}`;
    const spy = vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
      const request = new Request(input, init);
      const sent = request.headers.get("authorization") ?? "";
      const portkey = request.headers.get("x-portkey-api-key") ?? "";
      // The key straddles the 300 characters a row keeps of a message: no part of it may stay.
      return Response.json({ error: { message: `Invalid keys: ${portkey} ${"x".repeat(200)} ${sent}`, type: "invalid_request_error" } }, { status: 401 });
    });
    const res = await send(ask(uniqueModel("echo")), { authorization: `Bearer ${key}`, "x-portkey-api-key": gateway });
    expect(res.status).toBe(401);
    spy.mockRestore();
    const dump = async () => JSON.stringify((await env.DB.prepare("SELECT error FROM recent_requests WHERE error IS NOT NULL").all()).results);
    // The row lands with the counters' flush: wait until the message is there, then look for the keys in it.
    await eventually(async () => (await dump()).includes("Invalid keys:"));
    expect(await dump()).toContain("[credential]");
    expect(await dump()).not.toContain(key.slice("sk-echoed-".length, "sk-echoed-".length + 16));
    expect(await dump()).not.toContain(gateway);
  });
});

describe("no oracle in the API's store cost", () => {
  it("Should spend the same store calls on another tenant's node as on an unknown one (server-timing says how many)", async () => {
    const owner = `sk-${crypto.randomUUID()}`;
    const model = uniqueModel("echo");
    await send(ask(model), { authorization: `Bearer ${owner}` });
    await recordedFor(ask(model), { authorization: `Bearer ${owner}` });
    const hit = await send(ask(model), { authorization: `Bearer ${owner}` });
    const node = hit.headers.get("muscle-mem-node") ?? "";
    expect(node).toMatch(/^[0-9a-f]{32}$/);
    const unknown = "0".repeat(32);
    const stranger = `sk-${crypto.randomUUID()}`;
    // Its key check (KEY_FRESH_MS) done once, before anything is compared.
    await (await api("/whoami", { token: stranger })).arrayBuffer();
    const cost = async (path: string, method = "GET") => {
      const res = await api(path, { token: stranger, method });
      await res.arrayBuffer();
      return [res.status, /d1;dur=[^;]*;desc=(\d+)/.exec(res.headers.get("server-timing") ?? "")?.[1]];
    };
    for (const [path, method] of [
      ["/nodes/%s", "GET"],
      ["/nodes/%s/path", "GET"],
      ["/nodes/%s/prune", "GET"],
      ["/nodes/%s", "DELETE"],
    ]) {
      const foreign = await cost(path.replace("%s", node), method);
      expect(foreign[0]).toBe(404);
      expect(foreign, `${method} ${path}`).toEqual(await cost(path.replace("%s", unknown), method));
    }
    const trees = (await (await api("/trees", { token: owner })).json()) as { data: Array<{ id: string }> };
    const tree = trees.data[0]?.id ?? "";
    expect(tree).toMatch(/^[0-9a-f]{32}$/);
    for (const path of [
      "/trees/%s",
      "/trees/%s/children",
      "/trees/%s/subtree",
      "/trees/%s/export",
      "/trees/%s/templates",
      "/trees/%s/search?q=hello",
      "/stats?tree_id=%s",
      "/requests?tree=%s",
    ]) {
      const foreign = await cost(path.replace("%s", tree));
      expect(foreign, path).toEqual(await cost(path.replace("%s", unknown)));
    }
    // The owner's node is still there (the stranger's DELETE pruned nothing).
    expect((await api(`/nodes/${node}`, { token: owner })).status).toBe(200);
  });
});
