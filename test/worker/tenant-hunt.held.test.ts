import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import worker from "../../src/index";
import { afterEach, describe, expect, it, vi } from "vitest";
import { screenTurn } from "./screen-turn";
import { forgetAccepted, keyClock } from "../../src/engine/key-freshness";
import { chat, recorded, uniqueModel } from "./helpers";

/**
 * Tenancy and revoked-key attacks that held (docs/reliability.md, "Tenancy"), kept so that the paths the docs
 * name stay proved: a declared answer confirmed under one key serves no other key, and a revoked key is
 * served nothing on the streamed, only-if-cached and declared paths.
 */

const FRESH_MS = 900_000;

afterEach(() => {
  keyClock.now = () => Date.now();
  forgetAccepted();
  vi.restoreAllMocks();
});

const declared = (last: string, member: string, extra: Record<string, string> = {}) => ({
  "muscle-mem-bindings": JSON.stringify({ last, member_id: member }),
  ...extra,
});

/** Sends one turn under `key`; its status and cache outcome. */
async function ask(model: string, key: string, last: string, member: string, extra: Record<string, string> = {}): Promise<[number, string | null]> {
  const res = await chat(screenTurn(model, last, member), { key, headers: declared(last, member, extra) });
  await res.arrayBuffer();
  return [res.status, res.headers.get("muscle-mem-cache")];
}

/** Confirms a declared answer under `key` with two distinct bindings; the third binding is then served. */
async function confirm(model: string, key: string): Promise<void> {
  for (const [last, member] of [
    ["Knuth", "M-1001"],
    ["Wirth", "M-3003"],
  ]) {
    await ask(model, key, last, member);
    await recorded(screenTurn(model, last, member), { key, headers: declared(last, member) });
  }
  expect(await ask(model, key, "Dijkstra", "M-4004")).toEqual([200, "hit"]);
}

describe("attacks that held", () => {
  it("Should serve a declared answer confirmed under one key to no other key", { timeout: 60_000 }, async () => {
    const model = uniqueModel("wf-screen-decl");
    const owner = `sk-${crypto.randomUUID()}`;
    await confirm(model, owner);
    expect((await ask(model, `sk-${crypto.randomUUID()}`, "Lamport", "M-5005", { "cache-control": "only-if-cached" }))[0]).toBe(504);
    expect(await ask(model, owner, "Lamport", "M-5005", { "cache-control": "only-if-cached" })).toEqual([200, "hit"]);
  });

  it("Should serve a revoked key nothing: not its declared answers, not a streamed hit, and only-if-cached is a 504", { timeout: 60_000 }, async () => {
    let now = 7_000_000_000;
    keyClock.now = () => now;
    const model = uniqueModel("wf-screen-decl");
    const key = `sk-${crypto.randomUUID()}`;
    await confirm(model, key);
    const streamed = async () => {
      const res = await chat({ ...screenTurn(model, "Knuth", "M-1001"), stream: true }, { key, headers: declared("Knuth", "M-1001") });
      await res.arrayBuffer();
      return [res.status, res.headers.get("muscle-mem-cache")];
    };
    expect(await streamed()).toEqual([200, "hit"]);
    await (await fetch(`${env.UPSTREAM_TEST_URL}/__revoke`, { method: "POST", body: key })).arrayBuffer();
    now += FRESH_MS;
    expect(await ask(model, key, "Hoare", "M-6006")).toEqual([401, "miss"]);
    expect(await streamed()).toEqual([401, "miss"]);
    expect((await ask(model, key, "Knuth", "M-1001", { "cache-control": "only-if-cached" }))[0]).toBe(504);
  });
});

describe("the Worker credential on every route (attacks that held)", () => {
  it("Should refuse pass-through, HEAD and Gemini calls without WORKER_TOKEN before any upstream call, and answer OPTIONS itself", async () => {
    const sent: string[] = [];
    const real = globalThis.fetch;
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
      sent.push(new Request(input, init).url);
      return real(input, init);
    });
    const vars = { WORKER_TOKEN: "worker-secret" };
    const call = async (method: string, path: string, headers: Record<string, string>) => {
      const ctx = createExecutionContext();
      const res = await worker.fetch(new Request(`http://mm.test${path}`, { method, headers }), { ...env, ...vars } as Env, ctx);
      await res.arrayBuffer();
      await waitOnExecutionContext(ctx);
      return res.status;
    };
    const key = { authorization: `Bearer sk-${crypto.randomUUID()}` };
    expect(await call("GET", "/v1/models", key)).toBe(401);
    expect(await call("HEAD", "/v1/files", key)).toBe(401);
    expect(await call("DELETE", "/v1/files/file-1", key)).toBe(401);
    expect(await call("GET", "/v1/models", { "x-api-key": "sk-ant-x", "anthropic-version": "2023-06-01" })).toBe(401);
    expect(await call("GET", "/v1beta/models", { "x-goog-api-key": "AIza-x" })).toBe(401);
    expect(await call("OPTIONS", "/v1/chat/completions", key)).toBe(204);
    expect(sent).toEqual([]);
    // The control: with the Worker credential, the same pass-through reaches the upstream.
    expect(await call("GET", "/v1/models", { ...key, "muscle-mem-authorization": "Bearer worker-secret" })).toBe(200);
    expect(sent).toHaveLength(1);
  });
});
