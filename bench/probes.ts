import { percentile } from "./load";
import type { Body } from "./bodies";

export interface Headers {
  [name: string]: string;
}

/** What the Worker spent before it forwarded a miss: server-timing parse + lookup + claim (0 when absent). */
function beforeForward(timing: string | null): number {
  let ms = 0;
  for (const part of (timing ?? "").split(",")) {
    const m = /^\s*(parse|lookup|claim);dur=([\d.]+)/.exec(part);
    if (m) ms += Number(m[2]);
  }
  return ms;
}

/** Milliseconds from sending a streamed request to its first body byte. */
async function timeToFirstByte(url: string, body: Body, headers: Headers): Promise<{ ms: number; outcome: string; beforeForwardMs: number }> {
  const started = performance.now();
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ ...body, stream: true }),
  });
  const reader = res.body!.getReader();
  const first = await reader.read();
  const ms = performance.now() - started;
  if (first.done || res.status !== 200) throw new Error(`TTFB probe: status ${res.status}`);
  while (!(await reader.read()).done) {
    // drain, so that the proxy records the stream
  }
  return { ms, outcome: res.headers.get("muscle-mem-cache") ?? "direct", beforeForwardMs: beforeForward(res.headers.get("server-timing")) };
}

export interface TtfbResult {
  proxy: { p50: number; p99: number; samples: number; outcomes: Record<string, number> };
  /** server-timing parse + lookup + claim of the proxied misses: the Worker's time before it forwards. */
  beforeForward: { p50: number; p99: number; samples: number };
  /** The same Worker relaying the same request without the cache (`cache-control: no-store`): the local relay floor. */
  relay: { p50: number; p99: number; samples: number };
  direct: { p50: number; p99: number; samples: number };
}

/**
 * Streamed misses through the proxy, the same requests relayed by the same
 * Worker without the cache (`no-store`), and sent straight to the upstream,
 * alternating one by one. Every proxied body is new (a miss).
 */
export async function ttfbProbe(proxyUrl: string, upstreamUrl: string, makeBody: (i: number) => Body, headers: Headers, samples: number): Promise<TtfbResult> {
  const proxy: number[] = [];
  const before: number[] = [];
  const relay: number[] = [];
  const direct: number[] = [];
  const outcomes: Record<string, number> = {};
  for (let i = -3; i < samples; i++) {
    const p = await timeToFirstByte(`${proxyUrl}/v1/chat/completions`, makeBody(i), headers);
    const r = await timeToFirstByte(`${proxyUrl}/v1/chat/completions`, makeBody(i), { ...headers, "cache-control": "no-store" });
    const d = await timeToFirstByte(`${upstreamUrl}/chat/completions`, makeBody(i), headers);
    if (i < 0) continue; // warm-up
    if (r.outcome !== "bypass") throw new Error(`TTFB probe: the relay sample was a ${r.outcome}, not a bypass`);
    proxy.push(p.ms);
    before.push(p.beforeForwardMs);
    relay.push(r.ms);
    direct.push(d.ms);
    outcomes[p.outcome] = (outcomes[p.outcome] ?? 0) + 1;
  }
  const stats = (xs: number[]) => {
    xs.sort((a, b) => a - b);
    return { p50: percentile(xs, 0.5), p99: percentile(xs, 0.99), samples: xs.length };
  };
  return { proxy: { ...stats(proxy), outcomes }, beforeForward: stats(before), relay: stats(relay), direct: stats(direct) };
}

/** Sends `n` identical requests at once and counts what the cache said. */
export async function burst(
  url: string,
  body: Body,
  headers: Headers,
  n: number,
): Promise<{ outcomes: Record<string, number>; followers: number; wallMs: number }> {
  const outcomes: Record<string, number> = {};
  let followers = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: n }, async () => {
      const res = await fetch(`${url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify(body),
      });
      await res.arrayBuffer();
      const outcome = res.headers.get("muscle-mem-cache") ?? `status-${res.status}`;
      outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
      if (res.headers.get("muscle-mem-single-flight") === "follower") followers++;
    }),
  );
  return { outcomes, followers, wallMs: performance.now() - started };
}
