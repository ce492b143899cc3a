import { afterEach, describe, expect, it, vi } from "vitest";
import { BINDINGS_NOT_DECLARED } from "../../src/engine/template-hook";
import { newKey } from "./api-helpers";
import { callWorker, type Vars } from "./faults.support";
import { storeCost, uniqueModel } from "./helpers";

/** A bound only the test's clock (Date, faked) can end; the colo layer off, so the isolate's memory alone decides. */
const vars: Vars = { HOT_CACHE_TTL_MS: "10000", COLO_CACHE_TTL_MS: "0" };

function responses(body: unknown, key: string, headers: Record<string, string> = {}): Request {
  return new Request("http://mm.test/v1/responses", {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}`, ...headers },
    body: JSON.stringify(body),
  });
}

afterEach(() => vi.useRealTimers());

/**
 * A fast miss (a request that extends a leaf this isolate just recorded: src/engine/fast-miss.ts) looks no
 * template up, yet a client that sent `muscle-mem-bindings` on an API that does not read them (Responses; Anthropic
 * Messages and native Gemini read them since their views do: templates-apis.declared.test.ts) is told so on it
 * too, as on every other miss (before, only the misses that looked up said it).
 */
describe("fast miss with declared variables on Responses", () => {
  it("Should say on a fast miss that muscle-mem-bindings is not used on this API", async () => {
    const key = newKey();
    const model = uniqueModel("echo-fast-bind");
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() });
    const user = { role: "user", content: `look up order ${crypto.randomUUID()}` };
    const first = await callWorker(responses({ model, store: false, input: [user] }, key), vars);
    expect(first.res.headers.get("muscle-mem-cache")).toBe("miss");
    const answer = (await first.res.json()) as { output: unknown[] };
    await first.settled();
    const bindings = { "muscle-mem-bindings": JSON.stringify({ order: "A-1001" }) };
    const next = { model, store: false, input: [user, ...answer.output, { role: "user", content: "and its refund?" }] };
    const fast = await callWorker(responses(next, key, bindings), vars);
    await fast.res.arrayBuffer();
    await fast.settled();
    expect(fast.res.headers.get("muscle-mem-cache")).toBe("miss");
    // The fast path: no D1 query before the answer.
    expect(storeCost(fast.res).d1).toBe(0);
    expect(fast.res.headers.get("muscle-mem-template-miss")).toBe(BINDINGS_NOT_DECLARED);
  });
});
