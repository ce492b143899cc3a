import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { canonicalJson } from "../../src/core/canonical";
import { childHash, tenantOf } from "../../src/core/hash";
import { chatRequest as chatBody } from "../../src/core/messages";
import { recordInputOf } from "../../src/core/recording";
import { fastJoins } from "../../src/engine/lookup/childless";
import { keyRequest } from "../../src/providers/chat/key";
import { treeWriterOf } from "../../src/store/objects/tree-objects";
import { newKey } from "./api-helpers";
import { callWorker, chatRequest, type Vars } from "./faults.support";
import { generations, storeCost, uniqueModel } from "./helpers";

/** A bound long enough that only the test's clock (Date, faked) can end it; the colo layer off, so memory alone decides. */
const TTL_MS = 10_000;
const vars: Vars = { HOT_CACHE_TTL_MS: String(TTL_MS), COLO_CACHE_TTL_MS: "0" };

type Message = { role: string; content: string | null };

/** Calls the Worker and waits for its recording; returns the response, its body's first message and its store cost. */
async function call(body: unknown, key: string, headers: Record<string, string> = {}) {
  const { res, settled } = await callWorker(chatRequest(body, { key, headers }), vars);
  const cost = storeCost(res);
  const json = (await res.json()) as { choices: Array<{ message: Message }> };
  await settled();
  return { res, cost, message: json.choices[0].message, timing: res.headers.get("server-timing") ?? "" };
}

/** A first turn, recorded: the conversation so far (its user message and the model's answer as a client echoes it). */
async function firstTurn(model: string, key: string): Promise<Message[]> {
  const user = { role: "user", content: `look up order ${crypto.randomUUID()}` };
  const first = await call({ model, messages: [user] }, key);
  expect(first.res.headers.get("muscle-mem-cache")).toBe("miss");
  return [user, first.message];
}

/** The tree and h_n the Worker keys `body` to, for writes made behind this isolate's back. */
function keyed(body: { model: string; messages: Message[] }, key: string) {
  const k = keyRequest(chatBody.parse(body), tenantOf(`Bearer ${key}`), "default");
  if (!k.ok) throw new Error("unkeyable");
  return k.key;
}

/** Records `content` as the answer to `body` through the tree's object, as another isolate would: this isolate is not told. */
async function recordElsewhere(body: { model: string; messages: Message[] }, key: string, content: string): Promise<void> {
  const target = keyed(body, key);
  const json = canonicalJson({ role: "assistant", content });
  const input = recordInputOf(target, { hash: childHash(target.key, json), json }, "stop", { prompt: 1, completion: 1 }, 10, 5);
  await treeWriterOf(env, target.treeId).record(input, target.key);
}

afterEach(() => vi.useRealTimers());

describe("fast miss", () => {
  it("Should forward a request that extends a just-recorded leaf with no store call before it, then record it so that the next identical request hits", async () => {
    const key = newKey();
    const model = uniqueModel("echo-fast");
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() });
    const history = await firstTurn(model, key);
    const next = { model, messages: [...history, { role: "user", content: "and its refund?" }] };
    const leadersBefore = fastJoins().leader;

    const fast = await call(next, key);
    expect(fast.res.headers.get("muscle-mem-cache")).toBe("miss");
    // No lookup: no D1 query at all, no lookup phase; the one object call at most is the join beside the upstream request.
    expect(fast.cost.d1).toBe(0);
    expect(fast.cost.do).toBeLessThanOrEqual(1);
    expect(fast.timing).not.toMatch(/(^|, )lookup;/);
    // The path is recorded down to the childless answer (depth 2 of 3).
    expect(fast.res.headers.get("muscle-mem-miss")).toBe("new-branch; depth=2");
    expect(fastJoins().leader).toBe(leadersBefore + 1);

    const again = await call(next, key);
    expect(again.res.headers.get("muscle-mem-cache")).toBe("hit");
    expect(again.message.content).toBe(fast.message.content);
    expect(await generations(model)).toBe(2);
  });

  it("Should look up a request that extends a leaf once the bound since the leaf was recorded has passed", async () => {
    const key = newKey();
    const model = uniqueModel("echo-fast-bound");
    const start = Date.now();
    vi.useFakeTimers({ toFake: ["Date"], now: start });
    const history = await firstTurn(model, key);
    vi.setSystemTime(start + TTL_MS + 1);
    const late = await call({ model, messages: [...history, { role: "user", content: "later" }] }, key);
    expect(late.res.headers.get("muscle-mem-cache")).toBe("miss");
    expect(late.cost.d1).toBeGreaterThan(0);
    expect(late.timing).toMatch(/(^|, )lookup;/);
  });

  it("Should at worst miss a leaf that gained a child elsewhere within the bound, and serve that child once the bound has passed", async () => {
    const key = newKey();
    const model = uniqueModel("echo-fast-elsewhere");
    const start = Date.now();
    vi.useFakeTimers({ toFake: ["Date"], now: start });
    const history = await firstTurn(model, key);
    const inside = { model, messages: [...history, { role: "user", content: "inside the bound" }] };
    const outside = { model, messages: [...history, { role: "user", content: "outside the bound" }] };
    await recordElsewhere(inside, key, "recorded elsewhere (inside)");
    await recordElsewhere(outside, key, "recorded elsewhere (outside)");

    // Within the bound this isolate still believes the leaf childless: a miss (the model answers), never the other answer.
    vi.setSystemTime(start + TTL_MS - 1);
    const missed = await call(inside, key);
    expect(missed.res.headers.get("muscle-mem-cache")).toBe("miss");
    expect(missed.cost.d1).toBe(0);
    expect(missed.message.content).toBe("echo: inside the bound");

    // Past the bound (and after that miss's own recording forgot the leaf): looked up, and what was recorded elsewhere is served.
    vi.setSystemTime(start + TTL_MS + 1);
    const served = await call(outside, key);
    expect(served.res.headers.get("muscle-mem-cache")).toBe("hit");
    expect(served.message.content).toBe("recorded elsewhere (outside)");
  });

  it("Should count a duplicate generation when another request leads the flight, and still record", async () => {
    const key = newKey();
    const model = uniqueModel("echo-fast-dup");
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() });
    const history = await firstTurn(model, key);
    const next = { model, messages: [...history, { role: "user", content: "raced" }] };
    const target = keyed(next, key);
    // Another isolate's request leads this flight (it looked up and joined): the fast miss does not wait for it.
    const writer = treeWriterOf(env, target.treeId);
    const other = (await writer.join(target.key)) as { role: string; token?: string };
    expect(other.role).toBe("leader");
    const before = fastJoins().duplicate;
    const fast = await call(next, key);
    expect(fast.res.headers.get("muscle-mem-cache")).toBe("miss");
    expect(fast.cost.d1).toBe(0);
    expect(fastJoins().duplicate).toBe(before + 1);
    if (other.token) await writer.release(target.key, other.token);
    const again = await call(next, key);
    expect(again.res.headers.get("muscle-mem-cache")).toBe("hit");
  });

  it("Should make one generation for identical requests that extend the same leaf in one isolate at once", async () => {
    const key = newKey();
    const model = uniqueModel("slow-300-fast");
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() });
    const history = await firstTurn(model, key);
    const next = { model, messages: [...history, { role: "user", content: "together" }] };
    const calls = await Promise.all(Array.from({ length: 3 }, () => call(next, key)));
    const outcomes = calls.map((c) => `${c.res.headers.get("muscle-mem-cache")}${c.res.headers.get("muscle-mem-single-flight") ? "-follower" : ""}`);
    expect(outcomes.filter((o) => o === "miss")).toHaveLength(1);
    expect(new Set(calls.map((c) => c.message.content)).size).toBe(1);
    expect(await generations(model)).toBe(2);
  });

  it("Should look up, never fast-miss, a leaf of a tree with live learned templates: a template could answer what the path cannot", async () => {
    const key = newKey();
    const model = uniqueModel("echo-fast-templates");
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() });
    const user = { role: "user", content: `look up order ${crypto.randomUUID()}` };
    // A live template of this tree under a lookup key no request has: the tree has templates, none of which fits.
    await env.DB.prepare(
      "INSERT INTO templates (id, tree_id, lookup_key, anchor_depth, pattern, state, created_at, updated_at) VALUES (?1, ?2, ?3, 0, '{}', '{}', ?4, ?4)",
    )
      .bind(`t-${crypto.randomUUID()}`, keyed({ model, messages: [user] }, key).treeId, `nothing-${crypto.randomUUID()}`, Date.now())
      .run();
    const first = await call({ model, messages: [user] }, key);
    const next = await call({ model, messages: [user, first.message, { role: "user", content: "and then?" }] }, key);
    expect(next.res.headers.get("muscle-mem-cache")).toBe("miss");
    expect(next.cost.d1).toBeGreaterThan(0);
    expect(next.timing).toMatch(/(^|, )lookup;/);
  });

  it("Should never fast-miss an only-if-cached request: it looks up and answers 504", async () => {
    const key = newKey();
    const model = uniqueModel("echo-fast-oic");
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() });
    const history = await firstTurn(model, key);
    const { res } = await callWorker(
      chatRequest({ model, messages: [...history, { role: "user", content: "cached?" }] }, { key, headers: { "cache-control": "only-if-cached" } }),
      vars,
    );
    expect(res.status).toBe(504);
    expect(storeCost(res).d1).toBeGreaterThan(0);
    await res.arrayBuffer();
  });
});
