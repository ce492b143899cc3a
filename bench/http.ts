import type { LoadSpec, Measure } from "./load";

/** The credential and namespace of the benchmark's ordinary requests. */
export const HEADERS: Record<string, string> = { authorization: "Bearer sk-bench", "muscle-mem-namespace": "bench" };

/** `GET /healthz` of the same Worker: the floor every hit is compared with. */
export const FLOOR: LoadSpec = { name: "floor", requests: [{ method: "GET", path: "/healthz" }] };

export const log = (...a: unknown[]): void => console.error("[bench]", ...a);

/** One chat completion through the Worker. */
export const post = (url: string, body: unknown, headers: Record<string, string> = HEADERS): Promise<Response> =>
  fetch(`${url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });

/** Sends each body once (a recorded miss) and waits until each is served from the tree. */
export async function prime(url: string, bodies: unknown[], headers: Record<string, string> = HEADERS): Promise<void> {
  for (const body of bodies) await (await post(url, body, headers)).arrayBuffer();
  for (const body of bodies) {
    for (let tries = 0; ; tries++) {
      const res = await post(url, body, { ...headers, "cache-control": "only-if-cached" });
      await res.arrayBuffer();
      if (res.status === 200) break;
      if (tries > 100) throw new Error("priming: a body was never recorded");
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** A load that cycles chat bodies, sent with `headers`. */
export const chatSpec = (name: string, bodies: unknown[], headers: Record<string, string> = HEADERS): LoadSpec => ({
  name,
  requests: bodies.map((b) => ({
    method: "POST",
    path: "/v1/chat/completions",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(b),
  })),
});

/**
 * Throws unless every response of every segment had outcome `expected`
 * (see load.ts: `hit`, `hit+template`, `miss`, …) and none failed: a row must
 * measure the path it names.
 */
export function expectOutcome(name: string, m: Pick<Measure, "segments">, expected: string): void {
  for (const s of m.segments) {
    const other = Object.entries(s.outcomes).filter(([k]) => k !== expected);
    if (other.length || s.errors) throw new Error(`${name}: not every response was ${expected}: ${JSON.stringify(s.outcomes)} errors=${s.errors}`);
  }
}

/** Every response an exact hit (no template header). */
export const allHits = (name: string, m: Pick<Measure, "segments">): void => expectOutcome(name, m, "hit");

/** The phases of a response's `server-timing` header (ms by name, `total` included). */
export function serverTimingOf(res: Response): Record<string, number> {
  const out: Record<string, number> = {};
  for (const part of (res.headers.get("server-timing") ?? "").split(",")) {
    const m = /^\s*([\w-]+);dur=([\d.]+)/.exec(part);
    if (m) out[m[1]] = Number(m[2]);
  }
  return out;
}

/** The median of each phase over responses (a phase missing from a response counts as 0). */
export function medianPhases(timings: Array<Record<string, number>>): Record<string, number> {
  const names = new Set(timings.flatMap((t) => Object.keys(t)));
  const median = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  };
  return Object.fromEntries([...names].map((n) => [n, median(timings.map((t) => t[n] ?? 0))]));
}
