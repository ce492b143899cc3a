/**
 * The per-op floor (bench/worker-ops.ts starts it under `wrangler dev`): `GET /<op>?n=N` runs one piece of what
 * the observability middleware and the upstream wrapper do per request, N times in one request, so that the
 * workerd process's CPU per op can be read from /proc. `/healthz` (or any unknown op) does nothing.
 */
import { AsyncLocalStorage } from "node:async_hooks";

const context = new AsyncLocalStorage<object>();
const meter = new AsyncLocalStorage<object>();
const DROP = new Set(["host", "content-length", "connection", "keep-alive", "transfer-encoding", "upgrade", "cf-connecting-ip", "cf-ray"]);
const LINE = JSON.stringify({
  event: "request",
  level: "info",
  request_id: "6f1c2d3e-4b5a-4c6d-8e7f-0123456789ab",
  method: "POST",
  route: "/v1/chat/completions",
  status: 200,
  outcome: "miss",
  tree: "t_0123456789abcdef0123456789abcdef",
  reason: null,
  ms: { parse: 0, lookup: 2, upstream: 3, total: 6 },
});

/** A chat client's request headers, as the Worker sees them. */
function clientHeaders(): Headers {
  return new Headers({
    "content-type": "application/json",
    authorization: "Bearer sk-test-123456",
    "user-agent": "OpenAI/JS 6.1",
    accept: "application/json",
    "x-stainless-lang": "js",
    "x-stainless-os": "Linux",
    "muscle-mem-namespace": "a",
    host: "127.0.0.1",
    "content-length": "15000",
    connection: "keep-alive",
  });
}

const OPS: Record<string, (headers: Headers, client: AbortSignal) => unknown> = {
  none: () => 0,
  // Two contexts entered per request phase (before: the log context, then the meter inside it) against one.
  "context-two": () => context.run({ level: "info" }, () => meter.run({}, () => 1)),
  "context-one": () => context.run({ level: "info", cost: {} }, () => 1),
  // The upstream call's signal: the client's and the timeout's joined, before and after.
  "signal-any": (_, client) => AbortSignal.any([client, new AbortController().signal]),
  "signal-listener": (_, client) => {
    const timer = new AbortController();
    client.addEventListener("abort", () => timer.abort(client.reason), { once: true });
    return timer.signal;
  },
  timer: () => clearTimeout(setTimeout(() => {}, 60_000)),
  "headers-copy": (headers) => {
    const out = new Headers();
    headers.forEach((value, key) => {
      if (!DROP.has(key) && !key.startsWith("muscle-mem-") && key !== "cache-control") out.set(key, value);
    });
    return out;
  },
  // The same copy as one native copy, then deletes of the names found to drop.
  "headers-copy-delete": (headers) => {
    const out = new Headers(headers);
    for (const key of headers.keys()) if (DROP.has(key) || key.startsWith("muscle-mem-") || key === "cache-control") out.delete(key);
    return out;
  },
  "request-id": () => crypto.randomUUID(),
  "request-line": () => JSON.stringify(JSON.parse(LINE)),
  "console-line": () => console.log(LINE),
};

export default {
  async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const op = OPS[url.pathname.slice(1)] ?? OPS.none;
    const n = Number(url.searchParams.get("n") ?? 1);
    const headers = clientHeaders();
    const client = new AbortController().signal;
    let kept = 0;
    for (let i = 0; i < n; i++) if (op(headers, client) !== undefined) kept++;
    return new Response(String(kept));
  },
};
