/**
 * `npm run bench:shards [-- --seconds 5 --rounds 3 --connections 16 --trees 64 --bodies 4 --variants default,memory,d1]`
 *
 * Throughput of the Worker as trees are spread over 1..4 local D1 databases,
 * under a closed-loop mix of ~90% hits and ~10% misses, measured through
 * `wrangler dev` (docs/capacity.md "Local measurement"). One instance per
 * (variant, N), all of one bundled build (scripts/shard-load-dev.ts):
 *
 * - `default`: the repo's HOT_CACHE_TTL_MS (5 s): a hit reads its shard unless the same request was read
 *   from D1 in the last 5 s by this isolate (with many distinct requests, most hits still read D1).
 * - `memory`: HOT_CACHE_TTL_MS=3600000: after the first read, hits are served from isolate memory.
 * - `d1`: HOT_CACHE_TTL_MS=0: every hit reads its shard.
 *
 * Per segment it also records where the CPU went (the Worker's workerd, which runs the Durable Objects
 * and the local D1 databases too; wrangler's proxy and Node process; this load client) and how busy the
 * machine was, because on a small machine CPU, not D1, is the usual limit.
 *
 * The upstream is a loopback scripted model with no delay (its answer is a hash
 * of the last user message, so that no learned template can serve a new
 * request). `--trees` namespaces are warmed with `--bodies` recorded requests
 * each; then every connection sends 9 repeats of warmed requests (hits) and
 * 1 new request (a miss that records) out of every 10. Rounds run
 * every instance once, in an order that reverses each round; the table shows
 * medians over rounds. Writes bench-output/shard-load.json.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { parseArgs } from "node:util";
import { startScriptedModel } from "../tools/scripted-model";
import { BINDINGS, buildWorker, killAll, machineCpu, startDev, type Dev } from "./shard-load-dev";

const { values: args } = parseArgs({
  options: {
    seconds: { type: "string", default: "5" },
    rounds: { type: "string", default: "3" },
    connections: { type: "string", default: "16" },
    trees: { type: "string", default: "64" },
    bodies: { type: "string", default: "4" },
    variants: { type: "string", default: "default,memory,d1" },
  },
});
const opts = {
  seconds: Number(args.seconds),
  rounds: Number(args.rounds),
  connections: Number(args.connections),
  trees: Number(args.trees),
  bodies: Number(args.bodies),
};
const VARIANTS: Record<string, Record<string, string>> = { default: {}, memory: { HOT_CACHE_TTL_MS: "3600000" }, d1: { HOT_CACHE_TTL_MS: "0" } };
const TTL_LABEL: Record<string, string> = { default: "1 s (default)", memory: "1 h (memory)", d1: "0 (D1)" };
const variants = args.variants.split(",").map((v) => v.trim());
for (const v of variants) if (!VARIANTS[v]) throw new Error(`--variants: unknown ${v} (known: ${Object.keys(VARIANTS).join(", ")})`);

const log = (...a: unknown[]): void => console.error("[shard-load]", ...a);
const loadavg = (): string => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
const SYSTEM = "You are the order desk of a hardware store. Answer briefly, quote order numbers exactly, never invent stock levels. ".repeat(4);
const HEADERS = { "content-type": "application/json", authorization: "Bearer sk-shard-load" };

/** One chat request of the load: its tree (namespace) and its body. */
interface Call {
  namespace: string;
  body: string;
}
const call = (tree: number, text: string): Call => ({
  namespace: `load-${tree}`,
  body: JSON.stringify({
    model: "scripted-load",
    messages: [
      { role: "system", content: SYSTEM },
      { role: "user", content: text },
    ],
  }),
});
const warmed: Call[] = [];
for (let t = 0; t < opts.trees; t++) for (let b = 0; b < opts.bodies; b++) warmed.push(call(t, `Where is order ${1000 + b} of customer ${t}?`));

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
async function warm(dev: Dev): Promise<void> {
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
interface Segment {
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
const median = (xs: number[]): number =>
  pct(
    [...xs].sort((a, b) => a - b),
    0.5,
  );
let missSeq = 0;

/** A closed loop of `connections` clients for `seconds`: each sends 9 hits then 1 new miss, over and over. */
async function segment(dev: Dev, seconds: number, connections: number): Promise<Segment> {
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
          : call(Math.floor(Math.random() * opts.trees), `New question ${missSeq++} from client ${w} at ${Date.now()}`);
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

interface Instance {
  variant: string;
  shards: number;
  dev: Dev;
  segments: Segment[];
  trees?: Record<string, number>;
}

const started = Date.now();
const machine = { loadavgStart: loadavg(), loadavgEnd: "" };
log(`load average ${machine.loadavgStart}; bundling the Worker`);
// A deterministic answer that no learned template can derive from the request (so a new request stays a miss).
const answerOf = (text: string) => `Noted, reference ${createHash("sha256").update(text).digest("hex").slice(0, 12)}.`;
const model = await startScriptedModel({ script: (body) => ({ role: "assistant", content: answerOf(String(body.messages.at(-1)?.content ?? "")) }) });
const build = await buildWorker();
process.on("SIGINT", () => {
  killAll();
  build.remove();
  process.exit(130);
});
const instances: Instance[] = [];
try {
  for (const variant of variants) {
    for (let shards = 1; shards <= BINDINGS.length; shards++) {
      const vars = { UPSTREAM_BASE_URL: model.url, D1_SHARDS: BINDINGS.slice(0, shards).join(","), LOG_LEVEL: "warn", ...VARIANTS[variant] };
      log(`${variant} N=${shards}: starting wrangler dev, warming ${warmed.length} requests in ${opts.trees} trees`);
      const dev = await startDev(build, vars);
      instances.push({ variant, shards, dev, segments: [] });
      await warm(dev);
      await segment(dev, 2, opts.connections); // JIT and connections warm; not counted
    }
  }
  for (let round = 0; round < opts.rounds; round++) {
    const order = round % 2 === 0 ? instances : [...instances].reverse();
    for (const inst of order) {
      const s = await segment(inst.dev, opts.seconds, opts.connections);
      inst.segments.push(s);
      log(
        `round ${round + 1} ${inst.variant} N=${inst.shards}: ${s.rps.toFixed(0)} req/s, p50 ${s.p50.toFixed(1)} ms, p99 ${s.p99.toFixed(1)} ms, ${JSON.stringify(s.outcomes)}, unexpected ${s.unexpected}, errors ${s.errors}, CPU ${s.busyPct.toFixed(0)}% busy, load ${loadavg()}`,
      );
    }
  }
  machine.loadavgEnd = loadavg();
  for (const inst of instances) inst.trees = await inst.dev.treesPerShard();
} finally {
  for (const inst of instances) await inst.dev.stop();
  build.remove();
  await model.close();
}

const rows = instances.map((inst) => {
  const seg = inst.segments;
  const sum = (f: (s: Segment) => number) => seg.reduce((a, s) => a + f(s), 0);
  const med = (f: (s: Segment) => number) => median(seg.map(f));
  const outcomes: Record<string, number> = {};
  for (const s of seg) for (const [k, v] of Object.entries(s.outcomes)) outcomes[k] = (outcomes[k] ?? 0) + v;
  const base = instances.find((i) => i.variant === inst.variant && i.shards === 1);
  const rps = med((s) => s.rps);
  return {
    variant: inst.variant,
    shards: inst.shards,
    rps,
    vs1: base ? rps / median(base.segments.map((s) => s.rps)) : Number.NaN,
    perRound: seg.map((s) => Math.round(s.rps)),
    p50: med((s) => s.p50),
    p99: med((s) => s.p99),
    hitP50: med((s) => s.hitP50),
    missP50: med((s) => s.missP50),
    hitLookupMs: med((s) => s.hitLookupMs),
    outcomes,
    hitShare:
      (outcomes.hit ?? 0) /
      Math.max(
        1,
        sum((s) => s.requests),
      ),
    unexpected: sum((s) => s.unexpected),
    errors: sum((s) => s.errors),
    busyPct: med((s) => s.busyPct),
    cpuPerReq: {
      worker: med((s) => s.cpuPerReq.worker),
      proxy: med((s) => s.cpuPerReq.proxy),
      wrangler: med((s) => s.cpuPerReq.wrangler),
      client: med((s) => s.cpuPerReq.client),
    },
    treesPerShard: inst.trees,
    segments: seg,
  };
});
const seconds = Math.round((Date.now() - started) / 1000);
const header = `${opts.connections} connections, ${opts.rounds} interleaved rounds of ${opts.seconds} s, ${opts.trees} trees × ${opts.bodies} warmed requests; load average ${machine.loadavgStart} at start, ${machine.loadavgEnd} at end; ${seconds} s in all`;
const f = (n: number, d = 1) => n.toFixed(d);
console.log(`${header}\n`);
console.log(
  "| hot cache TTL | D1 shards | req/s (median) | vs 1 | per round | p50 / p99 ms | hit / miss p50 ms | hit lookup ms | hit / miss / other | errors | CPU busy | CPU ms/req: Worker / proxy / wrangler / client | trees per shard |",
);
console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
for (const r of rows) {
  const other =
    Object.entries(r.outcomes)
      .filter(([k]) => k !== "hit" && k !== "miss")
      .map(([k, v]) => `${k} ${v}`)
      .join(", ") || "0";
  const trees = r.treesPerShard
    ? BINDINGS.slice(0, r.shards)
        .map((b) => r.treesPerShard?.[b] ?? 0)
        .join("/")
    : "?";
  const cpu = r.cpuPerReq;
  console.log(
    `| ${TTL_LABEL[r.variant]} | ${r.shards} | ${f(r.rps, 0)} | ${f(r.vs1, 2)}x | ${r.perRound.join(", ")} | ${f(r.p50)} / ${f(r.p99)} | ${f(r.hitP50)} / ${f(r.missP50)} | ${f(r.hitLookupMs, 1)} | ${r.outcomes.hit ?? 0} / ${r.outcomes.miss ?? 0} / ${other} (${f(100 * r.hitShare)}% hits) | ${r.errors + r.unexpected} | ${f(r.busyPct, 0)}% | ${f(cpu.worker, 2)} / ${f(cpu.proxy, 2)} / ${f(cpu.wrangler, 2)} / ${f(cpu.client, 2)} | ${trees} |`,
  );
}
mkdirSync("bench-output", { recursive: true });
writeFileSync("bench-output/shard-load.json", JSON.stringify({ date: new Date().toISOString(), options: opts, variants, machine, seconds, rows }, null, 2));
const failed = rows.filter((r) => r.errors > 0 || r.unexpected > 0);
if (failed.length) {
  console.error(`shard-load: ${failed.length} rows had errors or unexpected outcomes (a planned hit that missed, or the reverse)`);
  process.exitCode = 1;
}
