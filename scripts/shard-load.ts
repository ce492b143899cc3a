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
 *
 * The load itself is scripts/shard-load-traffic.ts, the table scripts/shard-load-report.ts.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { startScriptedModel } from "../tools/scripted-model";
import { BINDINGS, buildWorker, killAll, startDev } from "./shard-load-dev";
import { type Instance, printTable, rowsOf } from "./shard-load-report";
import { segment, warm, warmedCalls } from "./shard-load-traffic";

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
const variants = args.variants.split(",").map((v) => v.trim());
for (const v of variants) if (!VARIANTS[v]) throw new Error(`--variants: unknown ${v} (known: ${Object.keys(VARIANTS).join(", ")})`);

const log = (...a: unknown[]): void => console.error("[shard-load]", ...a);
const loadavg = (): string => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
const warmed = warmedCalls(opts.trees, opts.bodies);
const load = { warmed, trees: opts.trees };

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
      await warm(dev, warmed);
      await segment(dev, 2, opts.connections, load); // JIT and connections warm; not counted
    }
  }
  for (let round = 0; round < opts.rounds; round++) {
    const order = round % 2 === 0 ? instances : [...instances].reverse();
    for (const inst of order) {
      const s = await segment(inst.dev, opts.seconds, opts.connections, load);
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

const rows = rowsOf(instances);
const seconds = Math.round((Date.now() - started) / 1000);
const header = `${opts.connections} connections, ${opts.rounds} interleaved rounds of ${opts.seconds} s, ${opts.trees} trees × ${opts.bodies} warmed requests; load average ${machine.loadavgStart} at start, ${machine.loadavgEnd} at end; ${seconds} s in all`;
printTable(header, rows);
mkdirSync("bench-output", { recursive: true });
writeFileSync("bench-output/shard-load.json", JSON.stringify({ date: new Date().toISOString(), options: opts, variants, machine, seconds, rows }, null, 2));
const failed = rows.filter((r) => r.errors > 0 || r.unexpected > 0);
if (failed.length) {
  console.error(`shard-load: ${failed.length} rows had errors or unexpected outcomes (a planned hit that missed, or the reverse)`);
  process.exitCode = 1;
}
