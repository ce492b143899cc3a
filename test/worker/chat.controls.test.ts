import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { chat, generations, recorded, uniqueModel } from "./helpers";
import { settled } from "./settled";

const ask = (model: string, extra: Record<string, unknown> = {}) => ({ model, messages: [{ role: "user", content: "Refund order #A-1 please" }], ...extra });
const nodesOf = async (model: string) =>
  (await env.DB.prepare("SELECT COUNT(*) AS n FROM nodes JOIN trees ON trees.id = nodes.tree_id WHERE trees.model = ?").bind(model).first<{ n: number }>())
    ?.n ?? 0;

describe("cache controls", () => {
  it("Should answer only-if-cached with 504 on a miss and 200 on a hit", async () => {
    const model = uniqueModel();
    const miss = await chat(ask(model), { headers: { "cache-control": "only-if-cached" } });
    expect(miss.status).toBe(504);
    expect(await miss.json()).toMatchObject({ error: { code: "not_cached", type: "cache_miss" } });
    expect(await generations(model)).toBe(0);
    await (await chat(ask(model))).arrayBuffer();
    await recorded(ask(model));
    const hit = await chat(ask(model), { headers: { "cache-control": "only-if-cached" } });
    expect(hit.status).toBe(200);
    expect(hit.headers.get("muscle-mem-cache")).toBe("hit");
  });

  it("Should ask the model and record nothing on no-store", async () => {
    const model = uniqueModel();
    // settled: whatever the request left to run after its response has run before the store is read.
    const res = await settled(async () => {
      const r = await chat(ask(model), { headers: { "cache-control": "no-store" } });
      await r.arrayBuffer();
      return r;
    });
    expect(res.headers.get("muscle-mem-cache")).toBe("bypass");
    expect(res.status).toBe(200);
    expect(await nodesOf(model)).toBe(0);
    expect(await generations(model)).toBe(1);
  });

  it("Should ask the model on no-cache and stop serving a node whose answers disagree", async () => {
    const model = uniqueModel("fresh");
    await (await chat(ask(model))).arrayBuffer();
    await recorded(ask(model));
    // settled: the second observation is recorded (and this isolate's memory of the node forgotten) before the next request.
    const again = await settled(async () => {
      const r = await chat(ask(model), { headers: { "cache-control": "no-cache" } });
      await r.arrayBuffer();
      return r;
    });
    expect(again.headers.get("muscle-mem-cache")).toBe("miss");
    // Two different answers now sit at the node: the default policy sends it back to the model.
    const res = await chat(ask(model));
    await res.arrayBuffer();
    expect(res.headers.get("muscle-mem-cache")).toBe("miss");
  });

  it("Should keep namespaces apart", async () => {
    const model = uniqueModel();
    await (await chat(ask(model), { headers: { "muscle-mem-namespace": "team-a" } })).arrayBuffer();
    await recorded(ask(model), { headers: { "muscle-mem-namespace": "team-a" } });
    const other = await chat(ask(model), { headers: { "muscle-mem-namespace": "team-b" } });
    expect(other.headers.get("muscle-mem-cache")).toBe("miss");
    await other.arrayBuffer();
  });

  it("Should keep tenants apart", async () => {
    const model = uniqueModel();
    await (await chat(ask(model), { key: "sk-alice" })).arrayBuffer();
    await recorded(ask(model), { key: "sk-alice" });
    const bob = await chat(ask(model), { key: "sk-bob", headers: { "cache-control": "only-if-cached" } });
    expect(bob.status).toBe(504);
  });

  it("Should split trees on answer-changing parameters but not on transport ones", async () => {
    const model = uniqueModel();
    await (await chat(ask(model, { temperature: 0 }))).arrayBuffer();
    await recorded(ask(model, { temperature: 0 }));
    const sameFrame = await chat(ask(model, { temperature: 0, stream: false, user: "u-1", metadata: { run: "7" } }), {
      headers: { "cache-control": "only-if-cached" },
    });
    expect(sameFrame.status).toBe(200);
    const otherFrame = await chat(ask(model, { temperature: 1 }), { headers: { "cache-control": "only-if-cached" } });
    expect(otherFrame.status).toBe(504);
  });
});

describe("bypass", () => {
  const cases: Array<[string, Record<string, unknown>]> = [
    ["n > 1", { n: 2 }],
    ["logprobs", { logprobs: true }],
    ["image content", { messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }] }] }],
    ["audio output", { modalities: ["text", "audio"] }],
  ];
  for (const [name, extra] of cases) {
    it(`Should pass ${name} through without storing anything`, async () => {
      const model = uniqueModel();
      const res = await settled(async () => {
        const r = await chat(ask(model, extra));
        await r.arrayBuffer();
        return r;
      });
      expect(res.headers.get("muscle-mem-cache")).toBe("bypass");
      expect(await nodesOf(model)).toBe(0);
    });
  }

  it("Should pass other /v1 routes through with the upstream's status and body", async () => {
    const res = await exports.default.fetch(new Request("http://mm.test/v1/files", { headers: { authorization: "Bearer sk-x" } }));
    expect(res.status).toBe(404);
    expect(res.headers.get("muscle-mem-cache")).toBe("bypass");
    expect(await res.json()).toMatchObject({ error: { code: "not_found" } });
  });
});
