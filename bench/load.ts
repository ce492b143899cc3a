import autocannon, { type Request } from "autocannon";

/** One measured segment: latency percentiles (ms), throughput and what the cache said. */
export interface Segment {
  p50: number;
  p99: number;
  rps: number;
  requests: number;
  errors: number;
  outcomes: Record<string, number>;
  /** What the store did, summed from the responses' `server-timing` (see storeCountsOf). */
  store: StoreCounts;
}

/** D1 queries (and the rows D1 billed for them), Durable Object calls and per-colo reads summed over responses. */
export interface StoreCounts {
  responses: number;
  d1Queries: number;
  doCalls: number;
  colo: { hit: number; miss: number; none: number };
  /** From `d1rows;desc="r=<read> w=<written>"` (D1's own meta; absent from older builds: 0). */
  rowsRead?: number;
  rowsWritten?: number;
}

export const noStoreCounts = (): StoreCounts => ({ responses: 0, d1Queries: 0, doCalls: 0, colo: { hit: 0, miss: 0, none: 0 }, rowsRead: 0, rowsWritten: 0 });

/** Adds one response's `server-timing` store entries (`d1;…;desc=<queries>`, `do;…;desc=<calls>`, `colo;…;desc=hit|miss`) to `into`. */
export function addStoreCounts(into: StoreCounts, serverTiming: string | null | undefined): void {
  const entries = Object.fromEntries(
    (serverTiming ?? "").split(",").flatMap((part) => {
      const m = /^\s*([\w-]+);dur=[\d.]+;desc="?([\w]+)"?/.exec(part);
      return m ? [[m[1], m[2]]] : [];
    }),
  );
  into.responses++;
  into.d1Queries += Number(entries.d1 ?? 0);
  into.doCalls += Number(entries.do ?? 0);
  const colo = entries.colo === "hit" || entries.colo === "miss" ? entries.colo : "none";
  into.colo[colo]++;
  const rows = /d1rows;desc="r=(\d+) w=(\d+)"/.exec(serverTiming ?? "");
  into.rowsRead = (into.rowsRead ?? 0) + Number(rows?.[1] ?? 0);
  into.rowsWritten = (into.rowsWritten ?? 0) + Number(rows?.[2] ?? 0);
}

/** What a row reports: the median of its segments' numbers, and the segments. */
export interface Measure {
  p50: number;
  p99: number;
  rps: number;
  segments: Segment[];
}

export interface LoadSpec {
  name: string;
  /** Another server than the one measured with it (a floor Worker). */
  url?: string;
  /** One or more requests, cycled by each connection. */
  requests: Request[];
}

/**
 * Runs autocannon against `url` for `seconds`, counting each response's
 * outcome: its `muscle-mem-cache` header, with `+template` when it also
 * carries `muscle-mem-template` (a declared or learned template served it).
 */
export async function runSegment(url: string, spec: LoadSpec, seconds: number, connections: number): Promise<Segment> {
  const outcomes: Record<string, number> = {};
  const store = noStoreCounts();
  const requests = spec.requests.map((r) => ({
    ...r,
    onResponse: (status: number, _body: string, _ctx: unknown, headers: Record<string, string>) => {
      addStoreCounts(store, headers["server-timing"]);
      const cache = headers["muscle-mem-cache"] ?? `status-${status}`;
      const outcome = headers["muscle-mem-template"] ? `${cache}+template` : cache;
      outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
    },
  }));
  // autocannon's own histogram keeps whole milliseconds; the rows compare sub-millisecond
  // differences, so every response time (float ms) is collected from its tracker.
  const latencies: number[] = [];
  const tracker = autocannon({ url, connections, duration: seconds, requests, timeout: 30, setupClient: staggered(requests, connections) });
  tracker.on("response", (_client: unknown, status: number, _bytes: number, ms: number) => {
    if (status >= 200 && status < 300) latencies.push(ms);
  });
  const result = await tracker;
  latencies.sort((a, b) => a - b);
  return {
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    rps: result.requests.total / Math.max(0.001, result.duration),
    requests: result.requests.total,
    errors: result.errors + result.timeouts + result.non2xx,
    outcomes,
    store,
  };
}

/**
 * Each connection starts its cycle through `requests` at its own offset (k/connections of the way round).
 * autocannon starts every connection at the first request: with a list of distinct bodies, the connections
 * then walk it in step, each body arriving as a burst of `connections` requests once per
 * connections × bodies / rps, not once per bodies / rps.
 */
function staggered(requests: Request[], connections: number): (client: { setRequests(requests: Request[]): void }) => void {
  let next = 0;
  return (client) => {
    const offset = Math.floor(((next++ % connections) * requests.length) / connections);
    if (offset > 0) client.setRequests([...requests.slice(offset), ...requests.slice(0, offset)]);
  };
}

/** The q-quantile of sorted values (nearest rank). */
export function percentile(sorted: number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function summarise(segments: Segment[]): Measure {
  return { p50: median(segments.map((s) => s.p50)), p99: median(segments.map((s) => s.p99)), rps: median(segments.map((s) => s.rps)), segments };
}

/**
 * Measures several loads side by side: `rounds` rounds, each running every
 * spec once for `seconds`, in an order that alternates between rounds so
 * that drift on a shared machine hits every spec alike. With `warmSeconds`,
 * each measured segment follows that long an unmeasured one of the same
 * load: a hot set that lapsed during the other loads' turns (longer than the
 * answers' TTL) is warm again, as it is under steady traffic.
 */
export async function interleaved(
  url: string,
  specs: LoadSpec[],
  opts: { rounds: number; seconds: number; connections: number; warmSeconds?: number },
): Promise<Record<string, Measure>> {
  const segments: Record<string, Segment[]> = Object.fromEntries(specs.map((s) => [s.name, []]));
  for (let round = 0; round < opts.rounds; round++) {
    const order = round % 2 === 0 ? specs : [...specs].reverse();
    for (const spec of order) {
      if (opts.warmSeconds) await runSegment(spec.url ?? url, spec, opts.warmSeconds, opts.connections);
      segments[spec.name].push(await runSegment(spec.url ?? url, spec, opts.seconds, opts.connections));
    }
  }
  return Object.fromEntries(Object.entries(segments).map(([name, s]) => [name, summarise(s)]));
}

/**
 * Measures several loads interleaved request by request on one connection:
 * each round is one autocannon run whose request list alternates the specs
 * (a0, b0, a1, b1, …), so that every spec sees the same moment of a shared
 * machine. A response is attributed to its spec by its request's callback,
 * which autocannon calls just before it reports the response's time. Per
 * spec, `rps` is 1000 / mean response time: what a connection of its own
 * would serve.
 */
export async function mixed(url: string, specs: LoadSpec[], opts: { rounds: number; seconds: number }): Promise<Record<string, Measure>> {
  const segments: Record<string, Segment[]> = Object.fromEntries(specs.map((s) => [s.name, []]));
  const longest = Math.max(...specs.map((s) => s.requests.length));
  for (let round = 0; round < opts.rounds; round++) {
    const latencies: Record<string, number[]> = Object.fromEntries(specs.map((s) => [s.name, []]));
    const outcomes: Record<string, Record<string, number>> = Object.fromEntries(specs.map((s) => [s.name, {}]));
    const errors: Record<string, number> = Object.fromEntries(specs.map((s) => [s.name, 0]));
    const store: Record<string, StoreCounts> = Object.fromEntries(specs.map((s) => [s.name, noStoreCounts()]));
    let pending: { name: string; ok: boolean } | null = null;
    const order = round % 2 === 0 ? specs : [...specs].reverse();
    const requests: Request[] = [];
    for (let i = 0; i < longest; i++) {
      for (const spec of order) {
        const r = spec.requests[i % spec.requests.length];
        requests.push({
          ...r,
          onResponse: (status: number, _body: string, _ctx: unknown, headers: Record<string, string>) => {
            addStoreCounts(store[spec.name], headers["server-timing"]);
            const cache = headers["muscle-mem-cache"] ?? `status-${status}`;
            const outcome = headers["muscle-mem-template"] ? `${cache}+template` : cache;
            outcomes[spec.name][outcome] = (outcomes[spec.name][outcome] ?? 0) + 1;
            if (status < 200 || status >= 300) errors[spec.name]++;
            pending = { name: spec.name, ok: status >= 200 && status < 300 };
          },
        });
      }
    }
    const tracker = autocannon({ url, connections: 1, duration: opts.seconds, requests, timeout: 30 });
    tracker.on("response", (_client: unknown, _status: number, _bytes: number, ms: number) => {
      if (pending?.ok) latencies[pending.name].push(ms);
      pending = null;
    });
    const result = await tracker;
    for (const spec of specs) {
      const sorted = latencies[spec.name].sort((a, b) => a - b);
      const mean = sorted.reduce((a, b) => a + b, 0) / Math.max(1, sorted.length);
      segments[spec.name].push({
        p50: percentile(sorted, 0.5),
        p99: percentile(sorted, 0.99),
        rps: 1000 / mean,
        requests: sorted.length,
        errors: errors[spec.name] + result.errors + result.timeouts,
        outcomes: outcomes[spec.name],
        store: store[spec.name],
      });
    }
  }
  return Object.fromEntries(Object.entries(segments).map(([name, s]) => [name, summarise(s)]));
}
