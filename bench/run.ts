/**
 * `npm run bench [-- --seconds 3 --rounds 3 --connections 10 --replay-limit N | --full-replay | --skip-replay]`:
 * runs the Worker under `wrangler dev` with a scripted upstream, measures
 * every row side by side, prints a Markdown table and writes
 * bench-output/bench.json. Ratios are what to read: absolute numbers move
 * with the machine's load.
 */
import { execSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { parseArgs } from "node:util";
import { replayScript } from "../tools/replay";
import { startScriptedModel } from "../tools/scripted-model";
import { hitRequests, shortAndLong, uniqueMiss, type Body } from "./bodies";
import { growTree } from "./grow";
import { interleaved, type LoadSpec } from "./load";
import { burst, ttfbProbe } from "./probes";
import { benchReplay } from "./replay";
import { snapshotWorker, startSnapshotDev } from "./snapshot";
import { markdown, triple, type Row } from "./table";

const { values: args } = parseArgs({
  options: {
    seconds: { type: "string", default: "3" },
    rounds: { type: "string", default: "3" },
    connections: { type: "string", default: "10" },
    bodies: { type: "string", default: "40" },
    nodes: { type: "string", default: "100000" },
    // The whole workload set takes about 5 minutes to replay twice on 2 cores: a subset by default.
    "replay-limit": { type: "string", default: "30" },
    "full-replay": { type: "boolean", default: false },
    "skip-replay": { type: "boolean", default: false },
  },
});
const load = { seconds: Number(args.seconds), rounds: Number(args.rounds), connections: Number(args.connections) };
const HEADERS = { authorization: "Bearer sk-bench", "muscle-mem-namespace": "bench" };
const SLOW_MARK = "(single-flight probe)";
const log = (...a: unknown[]) => console.error("[bench]", ...a);

function machine() {
  const cpu = readFileSync("/proc/cpuinfo", "utf8").match(/model name\s*:\s*(.*)/)?.[1] ?? cpus()[0]?.model ?? "unknown";
  const nproc = Number(execSync("nproc").toString().trim());
  return { nproc, cpu, node: process.version, loadavg: readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ") };
}

const post = (url: string, body: Body, extra: Record<string, string> = {}) =>
  fetch(`${url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", ...HEADERS, ...extra }, body: JSON.stringify(body) });

/** Sends each body once (a recorded miss) and waits until each is served from the tree. */
async function prime(url: string, bodies: Body[]): Promise<void> {
  for (const body of bodies) await (await post(url, body)).arrayBuffer();
  for (const body of bodies) {
    for (let tries = 0; ; tries++) {
      const res = await post(url, body, { "cache-control": "only-if-cached" });
      await res.arrayBuffer();
      if (res.status === 200) break;
      if (tries > 100) throw new Error("priming: a body was never recorded");
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

const chatSpec = (name: string, bodies: Body[]): LoadSpec => ({
  name,
  requests: bodies.map((b) => ({ method: "POST", path: "/v1/chat/completions", headers: { "content-type": "application/json", ...HEADERS }, body: JSON.stringify(b) })),
});
const FLOOR: LoadSpec = { name: "floor", requests: [{ method: "GET", path: "/healthz" }] };

function allHits(name: string, m: { segments: Array<{ outcomes: Record<string, number>; errors: number }> }): void {
  for (const s of m.segments) {
    const other = Object.entries(s.outcomes).filter(([k]) => k !== "hit");
    if (other.length || s.errors) throw new Error(`${name}: not every response was a hit: ${JSON.stringify(s.outcomes)} errors=${s.errors}`);
  }
}

const started = Date.now();
const info = machine();
log("machine", info);
const requests = hitRequests(Number(args.bodies));
const { short, long } = shortAndLong(`bench-${Date.now()}`);
const recorded = replayScript(requests);
const model = await startScriptedModel({
  chunkChars: 64,
  script: async (body) => {
    const last = body.messages.at(-1);
    if (typeof last?.content === "string" && last.content.includes(SLOW_MARK)) await new Promise((r) => setTimeout(r, 500));
    const reply = recorded(body);
    return "status" in reply ? { role: "assistant", content: "Let me check that reservation for you." } : reply;
  },
});
const snapshot = await snapshotWorker();
const dev = await startSnapshotDev(snapshot, { UPSTREAM_BASE_URL: model.url });
const rows: Row[] = [];
const results: Record<string, unknown> = {};
try {
  const hitBodies = requests.map((r) => r.body);
  const sizes = hitBodies.map((b) => JSON.stringify(b).length).sort((a, b) => a - b);
  log(`priming ${hitBodies.length} bodies (${sizes[0]}-${sizes.at(-1)} bytes) and the 2/100-message pair`);
  await prime(dev.url, [...hitBodies, short, long]);
  const [{ tree }] = await dev.sql("SELECT tree_id AS tree FROM nodes GROUP BY tree_id ORDER BY COUNT(*) DESC LIMIT 1");
  const smallNodes = await growTree(dev, snapshot.config, String(tree), 1000);
  log(`nodes in D1: ${smallNodes}`);

  const hitSpec = chatSpec("hit", hitBodies);
  // Throughput under concurrency, latency one request at a time: with 10
  // connections the p50 is mostly queueing (connections / throughput), so the
  // latency rows measure service time with a single connection.
  const serial = { ...load, connections: 1 };
  log("floor vs hit throughput (1k nodes)");
  const base = await interleaved(dev.url, [FLOOR, hitSpec], load);
  allHits("hit", base.hit);
  log("floor vs hit latency (1k nodes)");
  const baseLat = await interleaved(dev.url, [FLOOR, hitSpec], serial);
  allHits("hit", baseLat.hit);
  log("2 vs 100 messages");
  const convo = await interleaved(dev.url, [chatSpec("2 messages", [short]), chatSpec("100 messages", [long])], serial);
  allHits("2 messages", convo["2 messages"]);
  allHits("100 messages", convo["100 messages"]);

  log("streamed miss TTFB");
  const ttfbBase = hitBodies[0];
  const ttfb = await ttfbProbe(dev.url, model.url, (i) => uniqueMiss(ttfbBase, `ttfb ${i} ${Date.now()}`), HEADERS, 40);

  log("single flight");
  const before = model.generations();
  const flight = await burst(dev.url, uniqueMiss(ttfbBase, `${SLOW_MARK} ${Date.now()}`), HEADERS, 50);
  const generations = model.generations() - before;

  log(`growing the tree to ${args.nodes} nodes`);
  const bigNodes = await growTree(dev, snapshot.config, String(tree), Number(args.nodes));
  log(`nodes in D1: ${bigNodes}`);
  const big = await interleaved(dev.url, [FLOOR, hitSpec], serial);
  allHits("hit at 100k", big.hit);

  rows.push({
    row: "hit throughput / floor throughput",
    target: "≥ 0.7",
    value: (base.hit.rps / base.floor.rps).toFixed(2),
    met: base.hit.rps / base.floor.rps >= 0.7,
    detail: `${load.connections} connections. ${triple("floor", base.floor)}; ${triple("hit", base.hit)}`,
  });
  rows.push({
    row: "hit p50 − floor p50",
    target: "≤ 1 ms",
    value: `${(baseLat.hit.p50 - baseLat.floor.p50).toFixed(2)} ms`,
    met: baseLat.hit.p50 - baseLat.floor.p50 <= 1,
    detail: `1 connection. ${triple("floor", baseLat.floor)}; ${triple("hit", baseLat.hit)}`,
  });
  rows.push({
    row: `hit p50 at ${bigNodes} nodes / at ${smallNodes} nodes`,
    target: "≤ 1.2",
    value: (big.hit.p50 / baseLat.hit.p50).toFixed(2),
    met: big.hit.p50 / baseLat.hit.p50 <= 1.2,
    detail: `1 connection. ${triple("small", baseLat.hit)} (floor ${baseLat.floor.p50.toFixed(2)} ms); ${triple("big", big.hit)} (floor ${big.floor.p50.toFixed(2)} ms)`,
  });
  const c2 = convo["2 messages"];
  const c100 = convo["100 messages"];
  rows.push({
    row: "hit p50, 100-message / 2-message conversation",
    target: "≤ 1.5",
    value: (c100.p50 / c2.p50).toFixed(2),
    met: c100.p50 / c2.p50 <= 1.5,
    detail: `1 connection. ${triple(`2 msgs (${JSON.stringify(short).length} B)`, c2)}; ${triple(`100 msgs (${JSON.stringify(long).length} B)`, c100)}`,
  });
  rows.push({
    row: "streamed miss TTFB, proxy − direct (p50)",
    target: "≤ 2 ms",
    value: `${(ttfb.proxy.p50 - ttfb.direct.p50).toFixed(2)} ms`,
    met: ttfb.proxy.p50 - ttfb.direct.p50 <= 2,
    detail: `proxy: ${ttfb.proxy.p50.toFixed(2)} / ${ttfb.proxy.p99.toFixed(2)} ms; direct: ${ttfb.direct.p50.toFixed(2)} / ${ttfb.direct.p99.toFixed(2)} ms (${ttfb.proxy.samples} sequential samples each, outcomes ${JSON.stringify(ttfb.proxy.outcomes)})`,
  });
  rows.push({
    row: "single flight: 50 concurrent identical misses → upstream generations",
    target: "1",
    value: String(generations),
    met: generations === 1,
    detail: `outcomes ${JSON.stringify(flight.outcomes)}, ${flight.followers} followers, ${flight.wallMs.toFixed(0)} ms wall (upstream takes 500 ms)`,
  });
  Object.assign(results, { base, baseLat, convo, ttfb, flight: { ...flight, generations }, big, nodes: { small: smallNodes, big: bigNodes }, hitBodyBytes: { min: sizes[0], max: sizes.at(-1) } });
} finally {
  await dev.stop();
  await model.close();
}

if (!args["skip-replay"]) {
  log("replay of ../shared/workloads (own wrangler dev)");
  const limit = args["full-replay"] ? Infinity : Number(args["replay-limit"]);
  const replay = await benchReplay(snapshot, limit);
  const ratio = replay.storedBytes / replay.requestBytes;
  rows.push({
    row: `stored bytes / sum of request bodies (${replay.trajectories} trajectories, ${replay.requests} requests)`,
    target: "≤ 5%",
    value: `${(100 * ratio).toFixed(2)}%`,
    met: ratio <= 0.05,
    detail: `${(replay.storedBytes / 1e6).toFixed(2)} MB row payload in ${replay.nodes} nodes / ${(replay.requestBytes / 1e6).toFixed(1)} MB; SQLite file with indexes ${replay.fileBytes === null ? "n/a" : `${(replay.fileBytes / 1e6).toFixed(2)} MB (${((100 * replay.fileBytes) / replay.requestBytes).toFixed(2)}%)`}`,
  });
  const pass = (p: typeof replay.pass1) => `${(p.wallMs / 1000).toFixed(1)} s, ${Math.round((1000 * p.requests) / p.wallMs)} req/s, ${JSON.stringify(p.outcomes)}`;
  rows.push({
    row: "replay: pass 2 wall time / pass 1",
    target: "report",
    value: (replay.pass2.wallMs / replay.pass1.wallMs).toFixed(2),
    met: null,
    detail: `pass 1: ${pass(replay.pass1)}; pass 2: ${pass(replay.pass2)}; pass 2 mismatches ${replay.pass2.mismatches}, upstream generations ${replay.upstreamGenerationsPass2}`,
  });
  results.replay = replay;
}

snapshot.remove();
const table = markdown(rows);
const header = `muscle-mem bench, ${new Date().toISOString()}, ${info.nproc} cores (${info.cpu}), Node ${info.node}, load average at start ${info.loadavg}; ${load.rounds} interleaved rounds of ${load.seconds} s, ${load.connections} connections, wrangler dev on a bundled snapshot; ${((Date.now() - started) / 1000).toFixed(0)} s in all`;
console.log(`${header}\n\n${table}`);
mkdirSync("bench-output", { recursive: true });
writeFileSync("bench-output/bench.json", JSON.stringify({ date: new Date().toISOString(), machine: info, load, args, rows, results }, null, 2));
