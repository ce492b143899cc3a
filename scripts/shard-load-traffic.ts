/**
 * The load that scripts/shard-load.ts drives through each `wrangler dev`: the chat requests (one tree per
 * namespace), warming them, and a closed-loop segment of ~90% hits and ~10% new misses with what it measured.
 */
import { Agent, request } from "node:http";
import { machineCpu, type Dev } from "./shard-load-dev";

const SYSTEM = "You are the order desk of a hardware store. Answer briefly, quote order numbers exactly, never invent stock levels. ".repeat(4);
const HEADERS = { "content-type": "application/json", authorization: "Bearer sk-shard-load" };

/** One chat request of the load: its tree (namespace) and its body. */
export interface Call {
  namespace: string;
  body: string;
}
export const call = (tree: number, text: string): Call => ({
  namespace: `load-${tree}`,
  body: JSON.stringify({
    model: "scripted-load",
    messages: [
      { role: "system", content: SYSTEM },
      { role: "user", content: text },
    ],
  }),
});

/** The warmed requests: `bodies` recorded requests in each of `trees` trees. */
export function warmedCalls(trees: number, bodies: number): Call[] {
  const warmed: Call[] = [];
  for (let t = 0; t < trees; t++) for (let b = 0; b < bodies; b++) warmed.push(call(t, `Where is order ${1000 + b} of customer ${t}?`));
  return warmed;
}

/** One response: status, `muscle-mem-cache`, the lookup phase of `server-timing`, latency. */
interface Reply {
  status: number;
  cache: string;
  lookupMs: number | null;
  ms: number;
}

function send(url: URL, agent: Agent, c: Call, extra: Record<string, string> = {}): Promise<Reply> {
  const start = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", agent, headers: { ...HEADERS, ...extra, "muscle-mem-namespace": c.namespace } }, (res) => {
      res.resume();
      res.on("end", () => {
        const timing = /(?:^|,\s*)lookup;dur=([\d.]+)/.exec(String(res.headers["server-timing"] ?? ""));
        const cache = String(res.headers["muscle-mem-cache"] ?? "none") + (res.headers["muscle-mem-template"] ? "+template" : "");
        resolve({ status: res.statusCode ?? 0, cache, lookupMs: timing ? Number(timing[1]) : null, ms: performance.now() - start });
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(c.body);
  });
}

/** Records every warmed request (a few at a time) and checks that each is then served from the cache. */
export async function warm(dev: Dev, warmed: Call[]): Promise<void> {
  const url = new URL("/v1/chat/completions", dev.url);
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  const each = async (calls: Call[], extra: Record<string, string>, want: number) => {
    for (let i = 0; i < calls.length; i += 4) {
      const replies = await Promise.all(calls.slice(i, i + 4).map((c) => send(url, agent, c, extra)));
      const bad = replies.find((r) => r.status !== want);
      if (bad) throw new Error(`warming ${dev.url}: status ${bad.status} (${bad.cache}), wanted ${want}`);
    }
  };
  await each(warmed, {}, 200);
  await new Promise((r) => setTimeout(r, 500));
  await each(warmed, { "cache-control": "only-if-cached" }, 200);
  agent.destroy();
}

/** What one segment of load measured. */
export interface Segment {
  rps: number;
  requests: number;
  p50: number;
  p99: number;
  hitP50: number;
  missP50: number;
  /** Mean `lookup` phase (server-timing, ms) of hits: ~0 when served from isolate memory. */
  hitLookupMs: number;
  outcomes: Record<string, number>;
  /** Requests whose outcome was not the intended one (a planned hit that missed, or the reverse). */
  unexpected: number;
  errors: number;
  /** Share of the machine's CPU (all cores) in use during the segment, %. */
  busyPct: number;
  /** CPU ms per request: the Worker's workerd; wrangler's proxy workerd; wrangler's Node; this client. */
  cpuPerReq: { worker: number; proxy: number; wrangler: number; client: number };
}

const pct = (sorted: number[], q: number): number =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] : Number.NaN;
export const median = (xs: number[]): number =>
  pct(
    [...xs].sort((a, b) => a - b),
    0.5,
  );
let missSeq = 0;

/** The requests a segment draws from: the warmed ones (hits) and the trees a new request (a miss) goes to. */
export interface Load {
  warmed: Call[];
  trees: number;
}

/** A closed loop of `connections` clients for `seconds`: each sends 9 hits then 1 new miss, over and over. */
export async function segment(dev: Dev, seconds: number, connections: number, { warmed, trees }: Load): Promise<Segment> {
  const url = new URL("/v1/chat/completions", dev.url);
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const all: number[] = [];
  const byKind: Record<"hit" | "miss", number[]> = { hit: [], miss: [] };
  const lookups: number[] = [];
  const outcomes: Record<string, number> = {};
  let unexpected = 0;
  let errors = 0;
  const [cpu0, machine0, client0] = [dev.cpu(), machineCpu(), process.cpuUsage()];
  const start = performance.now();
  const deadline = start + seconds * 1000;
  const client = async (w: number) => {
    for (let i = 0; performance.now() < deadline; i++) {
      const kind = (i + w) % 10 === 9 ? "miss" : "hit";
      const c =
        kind === "hit"
          ? warmed[Math.floor(Math.random() * warmed.length)]
          : call(Math.floor(Math.random() * trees), `New question ${missSeq++} from client ${w} at ${Date.now()}`);
      try {
        const r = await send(url, agent, c);
        outcomes[r.cache] = (outcomes[r.cache] ?? 0) + 1;
        if (r.status !== 200) errors++;
        else if (r.cache !== kind) unexpected++;
        all.push(r.ms);
        byKind[kind].push(r.ms);
        if (kind === "hit" && r.lookupMs !== null) lookups.push(r.lookupMs);
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: connections }, (_, w) => client(w)));
  const elapsed = (performance.now() - start) / 1000;
  const [cpu1, machine1, client1] = [dev.cpu(), machineCpu(), process.cpuUsage(client0)];
  agent.destroy();
  const n = Math.max(1, all.length);
  for (const xs of [all, byKind.hit, byKind.miss]) xs.sort((a, b) => a - b);
  return {
    rps: all.length / elapsed,
    requests: all.length,
    p50: pct(all, 0.5),
    p99: pct(all, 0.99),
    hitP50: pct(byKind.hit, 0.5),
    missP50: pct(byKind.miss, 0.5),
    hitLookupMs: lookups.reduce((a, b) => a + b, 0) / Math.max(1, lookups.length),
    outcomes,
    unexpected,
    errors,
    busyPct: (100 * (machine1.busy - machine0.busy)) / Math.max(1, machine1.total - machine0.total),
    cpuPerReq: {
      worker: (cpu1.worker - cpu0.worker) / n,
      proxy: (cpu1.proxy - cpu0.proxy) / n,
      wrangler: (cpu1.wrangler - cpu0.wrangler) / n,
      client: (client1.user + client1.system) / 1000 / n,
    },
  };
}
