import { expect, it } from "vitest";
import { Desk, PROMPT } from "./support-compat";

/** One model call as the client sent it, and what the cache did. */
export interface ProviderExchange {
  url: string;
  headers: Record<string, string>;
  body: string;
  outcome: string;
}

/** The platform's fetch, captured before a test swaps the global for a client that takes no `fetch` option. */
const nativeFetch = globalThis.fetch;

/** A fetch that logs every POST whose path matches `modelCall`, with its cache outcome. */
export function providerFetch(log: ProviderExchange[], modelCall: RegExp): typeof fetch {
  return async (input: string | URL | Request, init?: RequestInit) => {
    const request = new Request(input, init);
    const body = request.method === "POST" ? await request.clone().text() : "";
    const response = await nativeFetch(request);
    if (request.method === "POST" && modelCall.test(new URL(request.url).pathname)) {
      const headers: Record<string, string> = {};
      request.headers.forEach((value, key) => (headers[key] = value));
      log.push({ url: request.url, headers, body, outcome: response.headers.get("muscle-mem-cache") ?? "none" });
    }
    return response;
  };
}

/** Waits until the Worker recorded the answer to `exchange`, by re-asking it with only-if-cached. */
export async function waitRecordedExchange(exchange: ProviderExchange, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const res = await nativeFetch(exchange.url, { method: "POST", headers: { ...exchange.headers, "cache-control": "only-if-cached" }, body: exchange.body });
    await res.arrayBuffer();
    if (res.status === 200) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("the Worker did not record the run in time");
}

/** Runs one client's tool-calling agent to its final text. */
export type ProviderRunner = (opts: { key: string; stream: boolean; desk: Desk; fetch: typeof fetch }) => Promise<string>;

/**
 * One row of the compatibility matrix for a provider API, JSON and streamed:
 * a tool-calling run misses on every turn, the same run again hits on every
 * turn with identical tool effects and no model call, another key misses
 * (tenants are isolated), and a changed tool result branches.
 */
export function providerMatrixRow(row: string, modelCall: RegExp, generations: () => number, runner: ProviderRunner): void {
  for (const stream of [false, true]) {
    it(`${row} (stream: ${stream}): misses, hits on repeat with 0 model calls, isolates keys, branches on a changed tool result`, async () => {
      const key = `sk-${row.replace(/\W+/g, "-")}-${stream}-${crypto.randomUUID().slice(0, 8)}`;
      const runOnce = async (k: string, status: string) => {
        const exchanges: ProviderExchange[] = [];
        const desk = new Desk(status);
        const final = await runner({ key: k, stream, desk, fetch: providerFetch(exchanges, modelCall) });
        return { outcomes: exchanges.map((e) => e.outcome), effects: desk.effects, final, exchanges };
      };
      const before = generations();
      const first = await runOnce(key, "delivered");
      expect(first.outcomes).toEqual(["miss", "miss", "miss"]);
      expect(first.effects).toEqual(["get_order A-1", "refund A-1 42.5"]);
      expect(first.final).toContain("refunded");
      expect(generations() - before).toBe(3);
      await waitRecordedExchange(first.exchanges[first.exchanges.length - 1]);

      const repeat = await runOnce(key, "delivered");
      expect(repeat.outcomes).toEqual(["hit", "hit", "hit"]);
      expect(repeat.effects).toEqual(first.effects);
      expect(repeat.final).toBe(first.final);
      expect(generations() - before).toBe(3);

      const other = await runOnce(`${key}-other`, "delivered");
      expect(other.outcomes).toEqual(["miss", "miss", "miss"]);
      expect(generations() - before).toBe(6);

      const branch = await runOnce(key, "shipped");
      expect(branch.outcomes).toEqual(["hit", "miss"]);
      expect(branch.effects).toEqual(["get_order A-1"]);
      expect(branch.final).toContain("shipped");
      expect(generations() - before).toBe(7);
    });
  }
}

export { PROMPT };
