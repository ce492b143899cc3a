import { exports } from "cloudflare:workers";
import { env } from "cloudflare:workers";
import { vi } from "vitest";
import { followersWaiting } from "./settled";

export interface ChatInit {
  key?: string;
  headers?: Record<string, string>;
}

/** POSTs a chat-completions body to the Worker. */
export function chat(body: unknown, init: ChatInit = {}): Promise<Response> {
  return chatAsSent(body, { authorization: `Bearer ${init.key ?? "sk-test-default"}`, ...init.headers });
}

/** POSTs a chat-completions body to the Worker with exactly `headers` and no default key (the eval workflows' `Chat`). */
export function chatAsSent(body: unknown, headers: Record<string, string>): Promise<Response> {
  return exports.default.fetch(
    new Request("http://mm.test/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
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
 * `Date` too): read once, after `settled()`. The real clock comes back after, up to `ms` behind: what `work`
 * put in memory may outlive the next call's jump, so one `later` per bound a test waits out.
 */
export async function later<T>(ms: number, work: () => Promise<T>): Promise<T> {
  vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + ms });
  try {
    return await work();
  } finally {
    vi.useRealTimers();
  }
}

/**
 * Holds the first `held` generation requests to the chat, Anthropic or Gemini upstream at a gate while `during` runs,
 * until `open()` (then they go on to the scripted model; later ones go at once): a test lets requests join a flight
 * whose leader is still waiting for the model, for as long as it takes, instead of relying on a `slow-<ms>` model
 * outlasting them. GETs (a key's check) and the scripted upstream's `/__` routes are never held. A gate still
 * shut when `during` ends is opened.
 */
export function gatedUpstream(held = Number.POSITIVE_INFINITY): { asked: () => number; open: () => void; during: <T>(work: () => Promise<T>) => Promise<T> } {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  let asked = 0;
  return {
    asked: () => asked,
    open: () => open(),
    async during(work) {
      const real = globalThis.fetch;
      const bases = [env.UPSTREAM_BASE_URL, env.ANTHROPIC_BASE_URL, (env as unknown as { GEMINI_BASE_URL: string }).GEMINI_BASE_URL].map(
        (b) => new URL(String(b)).origin,
      );
      const spy = vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
        const url = new URL(input instanceof Request ? input.url : String(input));
        const method = (input instanceof Request ? input.method : init?.method) ?? "GET";
        if (!bases.includes(url.origin) || url.pathname.startsWith("/__") || method === "GET") return real(input, init);
        if (++asked <= held) await gate;
        return real(input, init);
      });
      try {
        return await work();
      } finally {
        open();
        spy.mockRestore();
      }
    },
  };
}

/**
 * Sends `n` identical requests as one single flight, by construction: the first leads and its generation is held
 * at a gate (gatedUpstream) until the other `n - 1` wait on its flight in the tree's object (followersWaiting),
 * however long they take to get there; then the model answers. Returns the responses, the leader's first.
 */
export async function oneFlight(n: number, send: () => Promise<Response>): Promise<Response[]> {
  const upstream = gatedUpstream(1);
  return upstream.during(async () => {
    const before = await followersWaiting();
    const leader = send();
    await eventually(() => upstream.asked() === 1, 20_000);
    const followers = Array.from({ length: n - 1 }, () => send());
    await eventually(async () => (await followersWaiting()) === before + n - 1, 20_000);
    upstream.open();
    return Promise.all([leader, ...followers]);
  });
}
