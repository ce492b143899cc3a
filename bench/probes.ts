import { percentile } from "./load";
import type { Body } from "./bodies";

export interface Headers {
  [name: string]: string;
}

/** Milliseconds from sending a streamed request to its first body byte. */
async function timeToFirstByte(url: string, body: Body, headers: Headers): Promise<{ ms: number; outcome: string }> {
  const started = performance.now();
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify({ ...body, stream: true }) });
  const reader = res.body!.getReader();
  const first = await reader.read();
  const ms = performance.now() - started;
  if (first.done || res.status !== 200) throw new Error(`TTFB probe: status ${res.status}`);
  while (!(await reader.read()).done) {
    // drain, so that the proxy records the stream
  }
  return { ms, outcome: res.headers.get("muscle-mem-cache") ?? "direct" };
}

export interface TtfbResult {
  proxy: { p50: number; p99: number; samples: number; outcomes: Record<string, number> };
  direct: { p50: number; p99: number; samples: number };
}

/**
 * Streamed misses through the proxy against the same requests sent straight
 * to the upstream, alternating one by one. Every proxied body is new (a miss).
 */
export async function ttfbProbe(proxyUrl: string, upstreamUrl: string, makeBody: (i: number) => Body, headers: Headers, samples: number): Promise<TtfbResult> {
  const proxy: number[] = [];
  const direct: number[] = [];
  const outcomes: Record<string, number> = {};
  for (let i = -3; i < samples; i++) {
    const p = await timeToFirstByte(`${proxyUrl}/v1/chat/completions`, makeBody(i), headers);
    const d = await timeToFirstByte(`${upstreamUrl}/chat/completions`, makeBody(i), headers);
    if (i < 0) continue; // warm-up
    proxy.push(p.ms);
    direct.push(d.ms);
    outcomes[p.outcome] = (outcomes[p.outcome] ?? 0) + 1;
  }
  proxy.sort((a, b) => a - b);
  direct.sort((a, b) => a - b);
  return {
    proxy: { p50: percentile(proxy, 0.5), p99: percentile(proxy, 0.99), samples: proxy.length, outcomes },
    direct: { p50: percentile(direct, 0.5), p99: percentile(direct, 0.99), samples: direct.length },
  };
}

/** Sends `n` identical requests at once and counts what the cache said. */
export async function burst(url: string, body: Body, headers: Headers, n: number): Promise<{ outcomes: Record<string, number>; followers: number; wallMs: number }> {
  const outcomes: Record<string, number> = {};
  let followers = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: n }, async () => {
      const res = await fetch(`${url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
      await res.arrayBuffer();
      const outcome = res.headers.get("muscle-mem-cache") ?? `status-${res.status}`;
      outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
      if (res.headers.get("muscle-mem-single-flight") === "follower") followers++;
    }),
  );
  return { outcomes, followers, wallMs: performance.now() - started };
}
