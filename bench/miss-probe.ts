import type { Body } from "./bodies";
import { addStoreCounts, noStoreCounts, percentile, type StoreCounts } from "./load";

/** p50 / p99 of a sample set (ms). */
export interface Stats {
  p50: number;
  p99: number;
  samples: number;
}

export interface MissProbeResult {
  /** Misses through the Worker, the bare relay floor and the upstream itself, alternating one by one. */
  proxy: Stats;
  relay: Stats;
  direct: Stats;
  /** Median server-timing phase (ms) of the proxied misses: d1, do, parse, lookup, claim, total… */
  phases: Record<string, number>;
  /** What the store did for the proxied misses (server-timing counts). */
  store: StoreCounts;
  outcomes: Record<string, number>;
  /** Proxied misses that made no lookup (no `lookup` phase in server-timing): fast misses (src/engine/lookup/childless.ts). */
  fast: number;
}

const stats = (xs: number[]): Stats => {
  const s = [...xs].sort((a, b) => a - b);
  return { p50: percentile(s, 0.5), p99: percentile(s, 0.99), samples: s.length };
};

function phasesOf(serverTiming: string | null): Record<string, number> {
  const out: Record<string, number> = {};
  for (const part of (serverTiming ?? "").split(",")) {
    const m = /^\s*([\w-]+);dur=([\d.]+)/.exec(part);
    if (m) out[m[1]] = Number(m[2]);
  }
  return out;
}

/** Milliseconds to the whole JSON body, or to the first streamed byte (the rest drained). */
async function timed(url: string, body: Body, headers: Record<string, string>, stream: boolean): Promise<{ ms: number; res: Response }> {
  const started = performance.now();
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(stream ? { ...body, stream: true } : body),
  });
  if (res.status !== 200) throw new Error(`miss probe: ${url} answered ${res.status}: ${await res.text()}`);
  const reader = res.body!.getReader();
  const first = await reader.read();
  let ms = performance.now() - started;
  if (first.done) throw new Error(`miss probe: ${url} sent no body`);
  while (!(await reader.read()).done) {
    // drain: the Worker records the answer once the stream ends
  }
  if (!stream) ms = performance.now() - started;
  return { ms, res };
}

/**
 * `samples` new requests (each a miss), each sent through the Worker, then
 * through the bare relay floor, then straight to the upstream. `gapMs` apart
 * (0: back to back, so a miss's background work lands on the next request).
 */
export async function missProbe(opts: {
  proxyUrl: string;
  relayUrl: string;
  upstreamUrl: string;
  makeBody: (i: number) => Body;
  headers: Record<string, string>;
  samples: number;
  gapMs: number;
  stream: boolean /** The `muscle-mem-cache` value every proxied answer must carry; null: none is checked (a floor in the proxy's place). */;
  expect?: string | null;
}): Promise<MissProbeResult> {
  const proxy: number[] = [];
  const relay: number[] = [];
  const direct: number[] = [];
  const timings: Array<Record<string, number>> = [];
  const store = noStoreCounts();
  const outcomes: Record<string, number> = {};
  let fast = 0;
  const pause = () => (opts.gapMs ? new Promise((r) => setTimeout(r, opts.gapMs)) : Promise.resolve());
  for (let i = -3; i < opts.samples; i++) {
    const body = opts.makeBody(i);
    const p = await timed(`${opts.proxyUrl}/v1/chat/completions`, body, opts.headers, opts.stream);
    await pause();
    const r = await timed(`${opts.relayUrl}/v1/chat/completions`, body, opts.headers, opts.stream);
    await pause();
    const d = await timed(`${opts.upstreamUrl}/chat/completions`, body, opts.headers, opts.stream);
    await pause();
    if (i < 0) continue; // warm-up
    const outcome = p.res.headers.get("muscle-mem-cache") ?? "none";
    outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
    const expected = opts.expect === undefined ? "miss" : opts.expect;
    if (expected !== null && outcome !== expected) throw new Error(`miss probe: a new request was a ${outcome}`);
    proxy.push(p.ms);
    relay.push(r.ms);
    direct.push(d.ms);
    const phases = phasesOf(p.res.headers.get("server-timing"));
    if (phases.lookup === undefined) fast++;
    timings.push(phases);
    addStoreCounts(store, p.res.headers.get("server-timing"));
  }
  return { proxy: stats(proxy), relay: stats(relay), direct: stats(direct), phases: medianOf(timings), store, outcomes, fast };
}

function medianOf(timings: Array<Record<string, number>>): Record<string, number> {
  const names = new Set(timings.flatMap((t) => Object.keys(t)));
  return Object.fromEntries([...names].map((n) => [n, stats(timings.map((t) => t[n] ?? 0)).p50]));
}
