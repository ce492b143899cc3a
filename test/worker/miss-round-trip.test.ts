import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { tenantOf } from "../../src/core/hash";
import { keyRequest } from "../../src/providers/chat/key";
import { chatRequest } from "../../src/core/messages";
import { newKey } from "./api-helpers";
import { chat, generations, later, oneFlight, recorded, storeCost, uniqueModel } from "./helpers";

/** Runs `work` with the clock past HOT_CACHE_TTL_MS and COLO_CACHE_TTL_MS (200 ms each in tests): neither the isolate nor the colo holds the answers. */
const cool = (work: () => Promise<void>) => later(450, work);

const ask = (model: string, text: string) => ({ model, messages: [{ role: "user", content: `${text} ${crypto.randomUUID()}` }] });

/** A cold lookup's own read from the Worker: the answers at h_n, one indexed query. A hit stops there. */
const WORKER_READ = 1;
/**
 * What the tree's object reads for a cold lookup the Worker's read could not serve (chat route): the Worker read
 * the tree's primary (no read replication, one shard) and nothing was recorded at h_n since, so the object does
 * not read the answers again, only whether the tree has live learned templates (one query, no directory with one
 * shard). server-timing's d1 entry counts it with the Worker's own queries.
 */
const OBJECT_READS = 1;
/** The object's read of the answers at h_n, when a recording there landed after the Worker's read (src/store/objects/recent-writes.ts). */
const REREAD = 1;

describe("one far round trip on a miss, none on a hit", () => {
  it("Should read D1 from the Worker, then make one call to the tree's object before it forwards a cold miss, and count both reads in server-timing", async () => {
    const key = newKey();
    const body = ask(uniqueModel("far-miss"), "cold miss");
    const miss = await chat(body, { key });
    expect(miss.headers.get("muscle-mem-cache")).toBe("miss");
    const cost = storeCost(miss);
    await miss.arrayBuffer();
    expect(cost).toEqual({ d1: WORKER_READ + OBJECT_READS, do: 1 });
  });

  it("Should answer a cold hit from the Worker's own D1 read with no call to the tree's object, then a warm hit with nothing", async () => {
    const key = newKey();
    const body = ask(uniqueModel("far-hit"), "cold hit");
    await (await chat(body, { key })).arrayBuffer();
    await recorded(body, { key });
    // The clock set past both bounds and standing still: the cold hit reads D1, then the warm one finds it in this isolate's memory.
    await cool(async () => {
      const cold = await chat(body, { key });
      expect(cold.headers.get("muscle-mem-cache")).toBe("hit");
      const coldCost = storeCost(cold);
      await cold.arrayBuffer();
      expect(coldCost).toEqual({ d1: WORKER_READ, do: 0 });

      const warm = await chat(body, { key });
      expect(warm.headers.get("muscle-mem-cache")).toBe("hit");
      const warmCost = storeCost(warm);
      await warm.arrayBuffer();
      expect(warmCost).toEqual({ d1: 0, do: 0 });
    });
  });

  it("Should make one generation for N concurrent identical cold misses, each counting the D1 reads of its one lookup in the tree's object", async () => {
    const key = newKey();
    const model = uniqueModel("far-flight");
    const body = ask(model, "together");
    const responses = await oneFlight(5, () => chat(body, { key }));
    const outcomes: string[] = [];
    const texts = new Set<string>();
    for (const res of responses) {
      expect(res.status).toBe(200);
      outcomes.push(res.headers.get("muscle-mem-cache") ?? "");
      // A lookup through the object after the Worker's read (then maybe a follow; read again when the leader's
      // recording landed in between), a cold hit from the Worker's read once the leader recorded, or a warm hit.
      const cost = storeCost(res);
      if (cost.do > 0) expect([WORKER_READ + OBJECT_READS, WORKER_READ + OBJECT_READS + REREAD]).toContain(cost.d1);
      else expect([0, WORKER_READ]).toContain(cost.d1);
      const completion = (await res.json()) as { choices: Array<{ message: { content: string } }> };
      texts.add(completion.choices[0].message.content);
    }
    expect(outcomes.filter((o) => o === "miss")).toHaveLength(1);
    expect(texts.size).toBe(1);
    expect(await generations(model)).toBe(1);
  });

  it("Should take no claim on an only-if-cached cold miss, so that the next request leads at once", async () => {
    const key = newKey();
    const model = uniqueModel("far-oic");
    const body = ask(model, "only if cached");
    const probe = await chat(body, { key, headers: { "cache-control": "only-if-cached" } });
    expect(probe.status).toBe(504);
    expect(storeCost(probe)).toEqual({ d1: WORKER_READ + OBJECT_READS, do: 1 });
    await probe.arrayBuffer();
    const next = await chat(body, { key });
    expect(next.headers.get("muscle-mem-cache")).toBe("miss");
    await next.arrayBuffer();
    expect(await generations(model)).toBe(1);
  });

  it("Should make a second call only in a tree with live learned templates: the object does not join there, so templates are looked up first", async () => {
    const key = newKey();
    const model = uniqueModel("far-templates");
    const first = ask(model, "before templates");
    const keyed = keyRequest(chatRequest.parse(first), tenantOf(`Bearer ${key}`), "default");
    if (!keyed.ok) throw new Error("unkeyable");
    // A live template of this tree under a lookup key no request has: the tree has templates, none of which fits.
    const now = Date.now();
    await env.DB.prepare(
      "INSERT INTO templates (id, tree_id, lookup_key, anchor_depth, pattern, state, created_at, updated_at) VALUES (?1, ?2, ?3, 0, '{}', '{}', ?4, ?4)",
    )
      .bind(`t-${crypto.randomUUID()}`, keyed.key.treeId, `nothing-${crypto.randomUUID()}`, now)
      .run();
    const miss = await chat(ask(model, "with templates"), { key });
    expect(miss.headers.get("muscle-mem-cache")).toBe("miss");
    // The Worker's read and the object's (template presence, which the Worker's template memo now takes from the
    // object's answer instead of reading it again); then the learned-template read; then the join.
    expect(storeCost(miss)).toEqual({ d1: WORKER_READ + OBJECT_READS + 1, do: 2 });
    await miss.arrayBuffer();
  });
});
