import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { canonicalJson } from "../../src/core/canonical";
import { childHash, tenantOf } from "../../src/core/hash";
import { chatRequest as chatBody } from "../../src/core/messages";
import { recordInputOf } from "../../src/core/recording";
import { keyRequest } from "../../src/providers/chat/key";
import { treeWriterOf } from "../../src/store/objects/tree-objects";
import { newKey } from "./api-helpers";
import { callWorker, chatRequest, type Vars } from "./faults.support";
import { uniqueModel } from "./helpers";
import { explained } from "./explain-hunt.support";

/**
 * Why-it-missed hunt, fast misses (docs/api.md "Why it missed"; docs/how-it-works.md "A fast miss"): a
 * request forwarded with no lookup says so, and its explanation never names a cause the store does not
 * hold. The clock is the test's (Date faked), the bound long enough that only it ends the isolate's
 * belief. Failed before its fix: a fast miss on a leaf recorded elsewhere since was explained as
 * `unconfirmed` (answers recorded that the serving policy did not serve), with nothing to say it was never looked up.
 */

const TTL_MS = 10_000;
const vars: Vars = { HOT_CACHE_TTL_MS: String(TTL_MS), COLO_CACHE_TTL_MS: "0" };

type Message = { role: string; content: string | null };

afterEach(() => vi.useRealTimers());

async function call(body: unknown, key: string, id: string) {
  const { res, settled } = await callWorker(chatRequest(body, { key, headers: { "x-request-id": id } }), vars);
  const json = (await res.json()) as { choices: Array<{ message: Message }> };
  await settled();
  return { res, message: json.choices[0].message };
}

/** Records `content` as the answer to `body` through the tree's object, as another isolate would: this isolate is not told. */
async function recordElsewhere(body: { model: string; messages: Message[] }, key: string, content: string): Promise<void> {
  const k = keyRequest(chatBody.parse(body), tenantOf(`Bearer ${key}`), "default");
  if (!k.ok) throw new Error("unkeyable");
  const json = canonicalJson({ role: "assistant", content });
  const input = recordInputOf(k.key, { hash: childHash(k.key.key, json), json }, "stop", { prompt: 1, completion: 1 }, 10, 5);
  await treeWriterOf(env, k.key.treeId).record(input, k.key.key);
}

describe("why it missed: a fast miss", () => {
  it("Should say a fast miss was not looked up, with the depth the header gave when the store agrees", async () => {
    const key = newKey();
    const model = uniqueModel("echo-why-fast");
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() });
    const user = { role: "user", content: `look up order ${crypto.randomUUID()}` };
    const first = await call({ model, messages: [user] }, key, `why-fast-1-${model}`);
    const id = `why-fast-2-${model}`;
    const fast = await call({ model, messages: [user, first.message, { role: "user", content: "and its refund?" }] }, key, id);
    expect(fast.res.headers.get("muscle-mem-miss")).toBe("new-branch; depth=2");
    const row = await explained(id, key);
    expect(row.explanation).toMatchObject({ kind: "new-branch", depth: 2, fast_miss: true, divergence: { index: 2, siblings: 0, closest: null } });
    const looked = await explained(`why-fast-1-${model}`, key);
    expect(looked.explanation).toMatchObject({ kind: "new-tree", fast_miss: false });
  });

  it("Should not explain a fast miss on a leaf answered elsewhere since as a policy that served nothing: it was not looked up", async () => {
    const key = newKey();
    const model = uniqueModel("echo-why-stale");
    const start = Date.now();
    vi.useFakeTimers({ toFake: ["Date"], now: start });
    const user = { role: "user", content: `look up order ${crypto.randomUUID()}` };
    const first = await call({ model, messages: [user] }, key, `why-stale-1-${model}`);
    const next = { model, messages: [user, first.message, { role: "user", content: "inside the bound" }] };
    await recordElsewhere(next, key, "recorded elsewhere");
    vi.setSystemTime(start + 1);
    const id = `why-stale-2-${model}`;
    const fast = await call(next, key, id);
    expect(fast.res.headers.get("muscle-mem-cache")).toBe("miss");
    expect(fast.res.headers.get("muscle-mem-miss")).toBe("new-branch; depth=2");
    const row = await explained(id, key);
    // What the store held when the request started: the whole path and an answer, which a lookup would have served.
    expect(row.explanation).toMatchObject({ kind: "unconfirmed", depth: 3, messages: 3, fast_miss: true, answers: 1 });
  });

  it("Should say unconfirmed, as a lookup would, of a fast miss whose last message is the childless node (the recorded answer echoed last)", async () => {
    const key = newKey();
    const model = uniqueModel("echo-why-last");
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() });
    const user = { role: "user", content: `look up order ${crypto.randomUUID()}` };
    const first = await call({ model, messages: [user] }, key, `why-last-1-${model}`);
    const id = `why-last-2-${model}`;
    const fast = await call({ model, messages: [user, first.message] }, key, id);
    expect(fast.res.headers.get("muscle-mem-cache")).toBe("miss");
    expect(fast.res.headers.get("muscle-mem-miss")).toBe("unconfirmed; depth=2");
    const row = await explained(id, key);
    expect(row.explanation).toMatchObject({ kind: "unconfirmed", depth: 2, messages: 2, fast_miss: true, divergence: null, answers: 0 });
  });
});
