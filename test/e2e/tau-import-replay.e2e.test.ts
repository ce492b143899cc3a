import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyAnswer, keyRequest } from "../../src/providers/chat/key";
import type { ChatMessage, ChatRequest } from "../../src/core/messages";
import { startTestUpstream } from "../../tools/test-upstream";
import { SHIPPED_WORKLOADS } from "../../tools/workloads";
import { LONG_TESTS } from "../support/long-tests";
import { startWranglerDev, type WranglerDev } from "../support/wrangler-dev";

/**
 * Imports the shipped subset of tau_bench.jsonl (test/fixtures/workloads) through POST /api/import of a real
 * `wrangler dev`, then replays every request the log holds: each one is served
 * from the tree, and the upstream sees no generation.
 */
interface Line {
  model: string;
  tools: unknown[] | null;
  messages: ChatMessage[];
  scripted_assistant_idx: number[];
}

const TAU = resolve(SHIPPED_WORKLOADS, "tau_bench.jsonl");
/** The first 8 of the 24 shipped trajectories in `npm test`; all of them in `npm run test:long`. */
const TRAJECTORIES = LONG_TESTS ? Infinity : 8;
const MIN_REQUESTS = LONG_TESTS ? 250 : 80;
const KEY = "Bearer sk-tau-replay";

type Call = { function: { name: string; arguments: string } };
type Served = { choices: Array<{ message: { content: string | null; tool_calls?: Call[] } }> };

/** A tool call as name and canonical arguments (key order is not part of the answer). */
function callOf(call: Call): [string, unknown] {
  try {
    return [call.function.name, JSON.parse(call.function.arguments)];
  } catch {
    return [call.function.name, call.function.arguments];
  }
}

/** fetch with one retry when a kept-alive socket was closed under it (a transport race, not a cache outcome). */
async function post(url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch {
    await new Promise((r) => setTimeout(r, 200));
    return fetch(url, init);
  }
}

let dev: WranglerDev;
let upstream: Awaited<ReturnType<typeof startTestUpstream>>;

beforeAll(async () => {
  upstream = await startTestUpstream(0);
  // The import seeds through a tenant key: the operator grants it (IMPORT_TENANTS, docs/deploy.md "Who may use the Worker").
  dev = await startWranglerDev({ vars: { UPSTREAM_BASE_URL: upstream.url, IMPORT_TENANTS: "*" } });
});

afterAll(async () => {
  await dev?.stop();
  await upstream?.close();
});

describe(`tau_bench import and replay (${LONG_TESTS ? "all" : "the first"} ${LONG_TESTS ? 24 : TRAJECTORIES} shipped trajectories)`, () => {
  it("Should serve every imported request from the tree with zero upstream calls", { timeout: 900_000 }, async () => {
    const text = readFileSync(TAU, "utf8").trim().split("\n").slice(0, TRAJECTORIES).join("\n");
    const lines = text.split("\n").map((l) => JSON.parse(l) as Line);
    const importRes = await fetch(`${dev.url}/api/import`, {
      method: "POST",
      headers: { authorization: KEY, "content-type": "application/x-ndjson" },
      body: text,
    });
    expect(importRes.status).toBe(200);
    const imported = (await importRes.json()) as { lines: number; trees: number; answers: number; nodes_inserted: number };
    expect(imported.lines).toBe(lines.length);

    // The proxy's own keying tells which requests hold exactly one recorded answer.
    const answersAt = new Map<string, Set<string>>();
    const requests: Array<{ body: ChatRequest; h: string; expected: ChatMessage }> = [];
    for (const line of lines) {
      line.messages.forEach((message, i) => {
        if (i === 0 || message.role !== "assistant" || line.scripted_assistant_idx.includes(i)) return;
        const body = { model: line.model, messages: line.messages.slice(0, i), ...(line.tools ? { tools: line.tools } : {}) } as ChatRequest;
        const keyed = keyRequest(body, "t", "default");
        if (!keyed.ok) throw new Error("unkeyable request");
        answersAt.set(keyed.key.key, (answersAt.get(keyed.key.key) ?? new Set()).add(keyAnswer(keyed.key, message)!.hash));
        requests.push({ body, h: keyed.key.key, expected: message });
      });
    }
    let hits = 0;
    let ambiguous = 0;
    const replay = async (r: (typeof requests)[number]) => {
      const single = (answersAt.get(r.h)?.size ?? 0) === 1;
      // Ambiguous nodes (two different recorded answers) are never served under the unanimous policy: ask only-if-cached there.
      const res = await post(`${dev.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: KEY, "content-type": "application/json", ...(single ? {} : { "cache-control": "only-if-cached" }) },
        body: JSON.stringify(r.body),
      });
      const json = (await res.json()) as Served;
      if (single) {
        expect(res.headers.get("muscle-mem-cache")).toBe("hit");
        // Every served message is exactly the recorded one, tool calls included (ids are fresh by design).
        const served = json.choices[0].message;
        const expected = r.expected as { content?: unknown; tool_calls?: Array<{ function: { name: string; arguments: string } }> };
        // Content comes back as recorded: "" stays "" (clients read content.length), absent or null is null.
        expect(served.content).toBe(expected.content ?? null);
        expect((served.tool_calls ?? []).map(callOf)).toEqual((expected.tool_calls ?? []).map(callOf));
        hits++;
      } else {
        expect(res.status).toBe(504);
        ambiguous++;
      }
    };
    // A few requests in flight at once, like several agents replaying.
    let next = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < requests.length) await replay(requests[next++]);
      }),
    );
    console.log(JSON.stringify({ event: "tau_replay", imported, requests: requests.length, hits, ambiguous, upstream_generations: upstream.generations() }));
    // The shipped subset (24 trajectories) holds several hundred requests, its first 8 about a hundred; all but ambiguous ones are hits.
    expect(requests.length).toBeGreaterThan(MIN_REQUESTS);
    expect(hits).toBe(requests.length - ambiguous);
    expect(ambiguous).toBeLessThanOrEqual(2);
    expect(upstream.generations()).toBe(0);
    expect(upstream.requests).toHaveLength(0);
  });
});
