import { exports } from "cloudflare:workers";
import { env } from "cloudflare:workers";
import { vi } from "vitest";

export interface ChatInit {
  key?: string;
  headers?: Record<string, string>;
}

/** POSTs a chat-completions body to the Worker. */
export function chat(body: unknown, init: ChatInit = {}): Promise<Response> {
  return exports.default.fetch(
    new Request("http://mm.test/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${init.key ?? "sk-test-default"}`, ...init.headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    }),
  );
}

/** How many generations the scripted upstream made for `model`. */
export async function generations(model: string): Promise<number> {
  const res = await fetch(`${env.UPSTREAM_TEST_URL}/__count?model=${encodeURIComponent(model)}`);
  return ((await res.json()) as { generations: number }).generations;
}

/** A model name no other test uses, so upstream counts are this test's own. */
export function uniqueModel(prefix = "m"): string {
  return `${prefix}-${crypto.randomUUID().slice(0, 8)}`;
}

/** Waits until `check` holds (counters and recordings land in waitUntil). */
export async function eventually(check: () => Promise<boolean> | boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error("condition not met in time");
}

/** Waits until the Worker has recorded an answer for the request, by asking only-if-cached. */
export async function recorded(body: unknown, init: ChatInit = {}): Promise<void> {
  await eventually(async () => {
    const res = await chat(body, { ...init, headers: { ...init.headers, "cache-control": "only-if-cached" } });
    await res.arrayBuffer();
    // A 200 is not enough: with the store unavailable, only-if-cached fails open to the model (`bypass`).
    return res.status === 200 && res.headers.get("muscle-mem-cache") === "hit";
  });
}

/** The store's cost of a response from its `server-timing`: Worker-side D1 queries and Durable Object calls. */
export function storeCost(res: Response): { d1: number; do: number } {
  const timing = res.headers.get("server-timing") ?? "";
  const count = (name: string) => {
    const entry = timing
      .split(",")
      .map((e) => e.trim())
      .find((e) => e.startsWith(`${name};`));
    const desc = entry ? /;desc=(\d+)/.exec(entry) : null;
    if (!desc) throw new Error(`no ${name} entry in server-timing '${timing}'`);
    return Number(desc[1]);
  };
  return { d1: count("d1"), do: count("do") };
}

/**
 * Runs `work` with the clock (`Date`, what the Worker's hot and colo caches read) standing still `ms` after
 * now: a bound such as HOT_CACHE_TTL_MS has passed, however fast or slow the machine, and no more time passes
 * while `work` runs. Only `Date` is faked: timers and I/O run as usual. Not for `eventually` (its deadline is
 * `Date` too): read once, after `settled()`.
 */
export async function later<T>(ms: number, work: () => Promise<T>): Promise<T> {
  vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + ms });
  try {
    return await work();
  } finally {
    vi.useRealTimers();
  }
}
