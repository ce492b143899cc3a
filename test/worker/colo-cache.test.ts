import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import type { StoredAnswer } from "../../src/core/answer";
import { configOf } from "../../src/config";
import { isolate } from "../../src/engine/isolate";
import { coloCache } from "../../src/engine/lookup/colo-cache";
import { api, newKey, ok, importFor } from "./api-helpers";
import { chat, eventually, later, recorded, uniqueModel } from "./helpers";
import { settled } from "./settled";

/** COLO_CACHE_TTL_MS of the test Worker (vitest.config.ts): the bound on another colo serving a stale node. */
const COLO_TTL_MS = Number((env as unknown as Record<string, string>).COLO_CACHE_TTL_MS);

const answer = (hash: string): StoredAnswer => ({
  hash,
  message: { role: "assistant", content: "ok" },
  observations: 1,
  finishReason: "stop",
  promptTokens: 1,
  completionTokens: 1,
  latencyMs: 1,
});

function timing(res: Response, name: string): string | undefined {
  return (res.headers.get("server-timing") ?? "")
    .split(",")
    .map((e) => e.trim())
    .find((e) => e.startsWith(`${name};`));
}

describe("colo cache: the Cache API layer shared by a colo's isolates", () => {
  it("Should serve an entry until its bound has passed after its read, then never again", async () => {
    // A clock the test sets (Date alone is faked): the entry's own deadline is what bounds staleness (the Cache API
    // keeps whole seconds), and a minute's bound keeps the Cache API's copy however slow the machine.
    const bound = 60_000;
    const colo = coloCache(bound)!;
    const key = crypto.randomUUID().replaceAll("-", "");
    const readAt = Date.now();
    vi.useFakeTimers({ toFake: ["Date"], now: readAt });
    try {
      await colo.put(key, [answer("a".repeat(32))], readAt);
      expect((await colo.get(key))?.answers.map((a) => a.hash)).toEqual(["a".repeat(32)]);
      vi.setSystemTime(readAt + bound - 1);
      expect((await colo.get(key))?.readAt).toBe(readAt);
      vi.setSystemTime(readAt + bound);
      expect(await colo.get(key)).toBeUndefined();
    } finally {
      vi.useRealTimers();
    }
  });

  it("Should keep no empty answer set, forget a deleted entry, and be off at TTL 0", async () => {
    const colo = coloCache(60_000)!;
    const key = crypto.randomUUID().replaceAll("-", "");
    await colo.put(key, []);
    expect(await colo.get(key)).toBeUndefined();
    await colo.put(key, [answer("b".repeat(32))]);
    await colo.delete(key);
    expect(await colo.get(key)).toBeUndefined();
    expect(coloCache(0)).toBeNull();
  });

  it("Should answer a hit from the colo with no D1 query when this isolate's memory has forgotten it", async () => {
    const key = newKey();
    const body = { model: uniqueModel("colo"), messages: [{ role: "user", content: `colo ${crypto.randomUUID()}` }] };
    await (await chat(body, { key })).arrayBuffer();
    await recorded(body, { key });
    // The clock set past every layer's bound, standing still: the hit reads D1 once (the Worker's own read, no call to the
    // tree's object) and fills the isolate's memory and the colo (after the response: settled waits for it), read back here.
    const put = await later(COLO_TTL_MS + 50, async () => {
      const fromD1 = await settled(async () => {
        const res = await chat(body, { key });
        await res.arrayBuffer();
        return res;
      });
      expect(fromD1.headers.get("muscle-mem-cache")).toBe("hit");
      expect(timing(fromD1, "colo")).toContain("desc=miss");
      expect(timing(fromD1, "do")).toContain("desc=0");
      expect(timing(fromD1, "d1")).toContain("desc=1");
      const node = fromD1.headers.get("muscle-mem-node")!;
      const [{ parent }] = (await env.DB.prepare("SELECT parent FROM nodes WHERE hash = ?").bind(node).all<{ parent: string }>()).results;
      const entry = await coloCache(COLO_TTL_MS)!.get(parent);
      expect(entry?.answers.length).toBeGreaterThan(0);
      return { parent, answers: entry!.answers };
    });
    // The same entry, given a minute's deadline so that a slow machine cannot let it lapse before the next request.
    await coloCache(60_000)!.put(put.parent, put.answers);
    // Another isolate of the colo has nothing in memory: stand for it by emptying this one's.
    isolate(configOf(env)).hot.clear();
    const fromColo = await chat(body, { key });
    expect(fromColo.headers.get("muscle-mem-cache")).toBe("hit");
    expect(timing(fromColo, "colo")).toContain("desc=hit");
    expect(timing(fromColo, "d1")).toContain("desc=0");
    expect(timing(fromColo, "do")).toContain("desc=0");
    await fromColo.arrayBuffer();
  });

  it("Should forget the colo entry of a node at once when this colo records a new answer there", async () => {
    const key = newKey();
    const body = { model: uniqueModel("fresh-colo"), messages: [{ role: "user", content: `colo record ${crypto.randomUUID()}` }] };
    await (await chat(body, { key })).arrayBuffer();
    await recorded(body, { key });
    const hit = await chat(body, { key });
    expect(hit.headers.get("muscle-mem-cache")).toBe("hit");
    const node = hit.headers.get("muscle-mem-node")!;
    await hit.arrayBuffer();
    const [{ parent }] = (await env.DB.prepare("SELECT parent FROM nodes WHERE hash = ?").bind(node).all<{ parent: string }>()).results;
    // An entry that would live a minute: only the recording's delete can make it go within the wait below.
    const colo = coloCache(60_000)!;
    await colo.put(parent, (await colo.get(parent))?.answers ?? [answer(node)]);
    expect(await colo.get(parent)).toBeDefined();
    // The `fresh` upstream answers differently every time: no-cache records a second answer at the same node.
    const again = await chat(body, { key, headers: { "cache-control": "no-cache" } });
    expect(again.headers.get("muscle-mem-cache")).toBe("miss");
    await again.arrayBuffer();
    await eventually(async () => (await colo.get(parent)) === undefined);
  });

  it.each(["subtree", "stale"] as const)("Should forget the colo entry of a node at once when this colo prunes its answer (%s prune)", async (kind) => {
    const key = newKey();
    const body = { model: uniqueModel(`prune-colo-${kind}`), messages: [{ role: "user", content: `colo prune ${crypto.randomUUID()}` }] };
    await (await chat(body, { key })).arrayBuffer();
    await recorded(body, { key });
    const hit = await chat(body, { key });
    const node = hit.headers.get("muscle-mem-node")!;
    await hit.arrayBuffer();
    const [{ parent, tree_id }] = (
      await env.DB.prepare("SELECT parent, tree_id FROM nodes WHERE hash = ?").bind(node).all<{ parent: string; tree_id: string }>()
    ).results;
    // An entry that would live a minute, so that only the prune's delete can make it go.
    const colo = coloCache(60_000)!;
    await colo.put(parent, [answer(node)]);
    expect(await colo.get(parent)).toBeDefined();
    if (kind === "subtree") await ok(api(`/nodes/${node}`, { token: key, method: "DELETE" }));
    else await ok(api("/prune", { token: key, method: "POST", body: { tree_id, older_than_ms: 0 } }));
    expect(await colo.get(parent)).toBeUndefined();
    const gone = await chat(body, { key, headers: { "cache-control": "only-if-cached" } });
    expect(gone.status).toBe(504);
    await gone.arrayBuffer();
  });
});

describe("colo cache: imports", () => {
  it("Should forget the colo entry of a node at once when this colo imports another answer there", async () => {
    const key = newKey();
    const model = uniqueModel("import-colo");
    const messages = [{ role: "user", content: `colo import ${crypto.randomUUID()}` }];
    await (await chat({ model, messages }, { key })).arrayBuffer();
    await recorded({ model, messages }, { key });
    const hit = await chat({ model, messages }, { key });
    const node = hit.headers.get("muscle-mem-node")!;
    await hit.arrayBuffer();
    const [{ parent }] = (await env.DB.prepare("SELECT parent FROM nodes WHERE hash = ?").bind(node).all<{ parent: string }>()).results;
    const colo = coloCache(60_000)!;
    await colo.put(parent, [answer(node)]);
    // A second, different answer at the same node: the two disagree, so the next lookup must not serve the first alone.
    const line = { model, messages: [...messages, { role: "assistant", content: `imported ${crypto.randomUUID()}` }] };
    await ok(importFor(key, { body: line }));
    expect(await colo.get(parent)).toBeUndefined();
  });
});
