import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import worker from "../../src/index";

/** Vars a fault test may override for one call (the real D1 and Durable Object bindings stay). */
export type Vars = Partial<
  Record<
    | "UPSTREAM_BASE_URL"
    | "UPSTREAM_TIMEOUT_MS"
    | "LOOKUP_TIMEOUT_MS"
    | "SINGLE_FLIGHT_WAIT_MS"
    | "ANTHROPIC_BASE_URL"
    | "CACHE_ANONYMOUS"
    | "HOT_CACHE_TTL_MS"
    | "COLO_CACHE_TTL_MS"
    | "GEMINI_BASE_URL"
    | "MAX_CACHEABLE_MESSAGE_BYTES",
    string
  >
>;

/** One call of the Worker with overridden vars; `settled` waits for its waitUntil work (recording). */
export interface Call {
  res: Response;
  settled: () => Promise<void>;
}

/**
 * Calls the Worker's own fetch handler with the pool's real bindings and some
 * vars replaced, so a test can point it at a faulty upstream or shorten a
 * timeout without touching the shared configuration.
 */
export async function callWorker(request: Request, vars: Vars = {}): Promise<Call> {
  const ctx = createExecutionContext();
  const res = await worker.fetch(request, { ...env, ...vars } as Env, ctx);
  return { res, settled: () => waitOnExecutionContext(ctx) };
}

/** A chat-completions request as a client sends it. */
export function chatRequest(body: unknown, init: { key?: string; headers?: Record<string, string>; signal?: AbortSignal } = {}): Request {
  return new Request("http://mm.test/v1/chat/completions", {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${init.key ?? "sk-faults"}`, ...init.headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
    signal: init.signal,
  });
}

/** The base URL of one fault of the test upstream (tools/fault-upstream.ts), under its own tag. */
export function faultBase(kind: string, tag = crypto.randomUUID().slice(0, 8)): { base: string; tag: string } {
  return { base: `${env.UPSTREAM_TEST_URL}/__fault/${kind}/${tag}/v1`, tag };
}

/** What the fault upstream saw for a tag. */
export async function faultStats(tag: string): Promise<{ requests: number; closedEarly: number; completed: number }> {
  const res = await fetch(`${env.UPSTREAM_TEST_URL}/__fault/stats/${tag}`);
  return (await res.json()) as { requests: number; closedEarly: number; completed: number };
}

/** Rows of D1 `nodes` and `trees` whose tree belongs to `model` (the frame names it). */
export async function storedFor(model: string): Promise<{ trees: number; nodes: number }> {
  const like = `%"model":"${model}"%`;
  const trees = await env.DB.prepare("SELECT count(*) AS n FROM trees WHERE frame LIKE ?1").bind(like).first<{ n: number }>();
  const nodes = await env.DB.prepare("SELECT count(*) AS n FROM nodes WHERE tree_id IN (SELECT id FROM trees WHERE frame LIKE ?1)")
    .bind(like)
    .first<{ n: number }>();
  return { trees: trees?.n ?? 0, nodes: nodes?.n ?? 0 };
}

/** Any node anywhere whose stored message contains `text`. */
export async function nodesContaining(text: string): Promise<number> {
  const row = await env.DB.prepare("SELECT count(*) AS n FROM nodes WHERE instr(message, ?1) > 0").bind(text).first<{ n: number }>();
  return row?.n ?? 0;
}
