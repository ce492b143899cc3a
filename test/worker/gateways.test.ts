import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ADMIN, api } from "./api-helpers";
import { eventually, uniqueModel } from "./helpers";

/** A chat-completions request with exactly these headers (the placeholder bearer a gateway's users share by default). */
async function send(body: unknown, headers: Record<string, string>): Promise<Response> {
  const res = await exports.default.fetch(
    new Request("http://mm.test/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    }),
  );
  await res.arrayBuffer();
  return res;
}

const cached = (headers: Record<string, string>) => ({ ...headers, "cache-control": "only-if-cached" });
const ask = (model: string) => ({ model, messages: [{ role: "user", content: "route me" }] });
const id = () => crypto.randomUUID().slice(0, 8);

/** Records `ask(model)` with `headers`, then checks it hits with them. */
async function record(model: string, headers: Record<string, string>): Promise<void> {
  expect((await send(ask(model), headers)).headers.get("muscle-mem-cache")).toBe("miss");
  await eventually(async () => (await send(ask(model), cached(headers))).status === 200);
}

/**
 * Per gateway: the header that says whose account answers (a tenant), and a header that routes to a provider,
 * deployment or model (keyed), with the same placeholder bearer on every request.
 */
const GATEWAYS: Array<{ gateway: string; credential?: string; routing?: [string, string, string]; ignored: [string, string, string] }> = [
  {
    gateway: "Portkey",
    credential: "x-portkey-api-key",
    routing: ["x-portkey-provider", "openai", "anthropic"],
    ignored: ["x-portkey-trace-id", "t-1", "t-2"],
  },
  {
    gateway: "Portkey (virtual key)",
    credential: "x-portkey-virtual-key",
    routing: ["x-portkey-config", '{"provider":"openai"}', "pc-other-config"],
    ignored: ["x-portkey-metadata", '{"a":1}', '{"a":2}'],
  },
  {
    gateway: "Helicone",
    credential: "helicone-auth",
    routing: ["helicone-target-url", "https://api.groq.com", "https://api.together.xyz"],
    ignored: ["helicone-user-id", "u1", "u2"],
  },
  { gateway: "LiteLLM proxy", credential: "x-litellm-api-key", routing: ["x-litellm-tags", "free", "paid"], ignored: ["x-litellm-timeout", "10", "20"] },
  { gateway: "OpenRouter", ignored: ["x-title", "My app", "Other app"] },
  { gateway: "Cloudflare AI Gateway", credential: "cf-aig-authorization", ignored: ["cf-aig-metadata", '{"u":1}', '{"u":2}'] },
];

describe("gateways in front of the model (docs/compat.md, Gateways)", () => {
  for (const { gateway, credential, routing, ignored } of GATEWAYS) {
    const placeholder = { authorization: "Bearer placeholder" };
    if (credential) {
      it(`${gateway}: two users with the same placeholder bearer and their own ${credential} never share a tenant`, async () => {
        const model = uniqueModel("gw");
        const alice = { ...placeholder, [credential]: `Bearer alice-${id()}` };
        await record(model, alice);
        expect((await send(ask(model), cached({ ...placeholder, [credential]: `Bearer bob-${id()}` }))).status).toBe(504);
        // Nor the placeholder alone: the gateway's account is part of the tenant.
        expect((await send(ask(model), cached(placeholder))).status).toBe(504);
      });
    }
    if (routing) {
      const [name, one, other] = routing;
      it(`${gateway}: ${name} is keyed, so two routes never share an answer`, async () => {
        const model = uniqueModel("gw");
        const who = credential ? { ...placeholder, [credential]: `k-${id()}` } : { authorization: `Bearer sk-${id()}` };
        await record(model, { ...who, [name]: one });
        expect((await send(ask(model), cached({ ...who, [name]: other }))).status).toBe(504);
        expect((await send(ask(model), cached(who))).status).toBe(504);
      });
    }
    const [name, one, other] = ignored;
    it(`${gateway}: ${name} is telemetry, not keyed`, async () => {
      const model = uniqueModel("gw");
      const who = credential ? { ...placeholder, [credential]: `k-${id()}` } : { authorization: `Bearer sk-or-${id()}` };
      await record(model, { ...who, [name]: one });
      const hit = await send(ask(model), { ...who, [name]: other });
      expect(hit.headers.get("muscle-mem-cache")).toBe("hit");
    });
  }

  it("never stores a routing header's value: the frame holds its digest", async () => {
    const model = uniqueModel("gw");
    const who = { authorization: "Bearer placeholder", "x-portkey-api-key": `pk-${id()}` };
    const secret = '{"provider":"openai","api_key":"sk-inline-secret"}';
    await record(model, { ...who, "x-portkey-config": secret });
    const list = (await (await api("/trees", { token: ADMIN })).json()) as { data: Array<{ id: string; model: string }> };
    const tree = list.data.find((t) => t.model === model);
    expect(tree).toBeDefined();
    const detail = await (await api(`/trees/${tree?.id}`, { token: ADMIN })).text();
    expect(detail).toContain("muscle-mem:gateway");
    expect(detail).toContain("x-portkey-config#");
    expect(detail).not.toContain("sk-inline-secret");
  });
});
