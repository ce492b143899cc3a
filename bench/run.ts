/**
 * `npm run bench [-- --seconds 3 --rounds 3 --connections 10 --replay-limit N | --full-replay | --skip-replay]`
 * `npm run bench -- --only templates [--templates 1000 --miss-samples 40]` (sections: core, templates, replay, floors):
 * `npm run bench -- --only scale [--scale-rows tally,move --tally-seconds 95 --tally-contrast-seconds 20 --move-conversations 2500]`: bench/scale.ts.
 * `npm run bench -- --only hot-tree [--hot-rates 200,400,800,1600 --hot-miss-rates 50,100,200,400 --hot-seconds 4 --hot-before REF]`:
 * one tree's cold hits and misses at rising rates, before and after (bench/hot-tree.ts; not in the default run).
 * `npm run bench -- --only floors [--hot 240 --miss-samples 40]`: hits and misses against bare Hono floors
 * (bench/floors/), and the store counts the capacity model reads (writes bench/capacity/measured.json).
 * runs the Worker under `wrangler dev` with a scripted upstream, measures
 * every row side by side, prints a Markdown table and writes
 * bench-output/bench.json. Ratios are what to read: absolute numbers move
 * with the machine's load.
 */
import { execSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { parseArgs } from "node:util";
import { parse } from "smol-toml";
import { replayScript } from "../tools/replay";
import { startScriptedModel } from "../tools/scripted-model";
import { hitRequests, shortAndLong } from "./bodies";
import { coreRows } from "./core";
import { floorRows, hotSet } from "./floors";
import { hotTreeArgs, hotTreeOptions, hotTreeRows } from "./hot-tree";
import { recordingCost } from "./recording-cost";
import { log } from "./http";
import { benchReplay } from "./replay";
import { scaleRows } from "./scale";
import { snapshotWorker, startSnapshotDev } from "./snapshot";
import { markdown, type Row } from "./table";
import { templateScript } from "./template-trees";
import { templateRows } from "./templates";

const SECTIONS = ["core", "templates", "replay", "floors", "scale"];
/** Sections run only when --only names them. */
const OPT_IN = ["hot-tree"];
const { values: args } = parseArgs({
  options: {
    seconds: { type: "string", default: "3" },
    rounds: { type: "string", default: "3" },
    connections: { type: "string", default: "10" },
    bodies: { type: "string", default: "40" },
    nodes: { type: "string", default: "100000" },
    // Learned templates in the big template tree (the small one holds 10).
    templates: { type: "string", default: "1000" },
    "miss-samples": { type: "string", default: "40" },
    // Distinct recorded bodies of the floors' hit rows: more than one TTL window's worth.
    hot: { type: "string", default: "240" },
    // The whole workload set takes about 5 minutes to replay twice on 2 cores: a subset by default.
    "replay-limit": { type: "string", default: "30" },
    "full-replay": { type: "boolean", default: false },
    "skip-replay": { type: "boolean", default: false },
    // Comma-separated sections to run (default: all).
    only: { type: "string" },
    // The scale section (bench/scale.ts): hit-caused D1 writes and a tree's move under load; `--scale-rows move` runs one.
    "scale-rows": { type: "string", default: "tally,move" },
    "tally-seconds": { type: "string", default: "95" },
    "tally-contrast-seconds": { type: "string", default: "20" },
    "move-conversations": { type: "string", default: "2500" },
    ...hotTreeArgs,
  },
});
const sections = new Set(args.only ? args.only.split(",").map((s) => s.trim()) : SECTIONS);
if (args["skip-replay"]) sections.delete("replay");
for (const s of sections)
  if (![...SECTIONS, ...OPT_IN].includes(s)) throw new Error(`--only: unknown section ${s} (known: ${[...SECTIONS, ...OPT_IN].join(", ")})`);
const load = { seconds: Number(args.seconds), rounds: Number(args.rounds), connections: Number(args.connections) };
const SLOW_MARK = "(single-flight probe)";

function machine() {
  const cpu = readFileSync("/proc/cpuinfo", "utf8").match(/model name\s*:\s*(.*)/)?.[1] ?? cpus()[0]?.model ?? "unknown";
  const nproc = Number(execSync("nproc").toString().trim());
  return { nproc, cpu, node: process.version, loadavg: readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ") };
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
    const template = templateScript(body);
    if (template) return template;
    const last = body.messages.at(-1);
    if (typeof last?.content === "string" && last.content.includes(SLOW_MARK)) await new Promise((r) => setTimeout(r, 500));
    const reply = recorded(body);
    return "status" in reply ? { role: "assistant", content: "Let me check that reservation for you." } : reply;
  },
});
const snapshot = await snapshotWorker();
const rows: Row[] = [];
const results: Record<string, unknown> = {};
const dev =
  sections.has("core") || sections.has("templates") || sections.has("floors") ? await startSnapshotDev(snapshot, { UPSTREAM_BASE_URL: model.url }) : null;
if (dev) {
  try {
    if (sections.has("core")) {
      const core = await coreRows({
        dev,
        config: snapshot.config,
        model,
        hitBodies: requests.map((r) => r.body),
        short,
        long,
        load,
        nodes: Number(args.nodes),
        slowMark: SLOW_MARK,
      });
      rows.push(...core.rows);
      Object.assign(results, core.results);
    }
    if (sections.has("templates")) {
      const t0 = Date.now();
      const templates = await templateRows(dev, snapshot.config, {
        templates: Number(args.templates),
        small: 10,
        rounds: load.rounds,
        seconds: load.seconds,
        missSamples: Number(args["miss-samples"]),
      });
      rows.push(...templates.rows);
      results.templates = { ...templates.results, seconds: (Date.now() - t0) / 1000 };
      log(`templates rows: ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    }
    if (sections.has("floors")) {
      const t0 = Date.now();
      const vars = (parse(readFileSync(snapshot.config, "utf8")).vars ?? {}) as Record<string, string>;
      const ttl = { hotMs: Number(vars.HOT_CACHE_TTL_MS ?? 5000), coloMs: Number(vars.COLO_CACHE_TTL_MS ?? 5000) };
      const startLike = (more: Record<string, string>) => startSnapshotDev(snapshot, { UPSTREAM_BASE_URL: model.url, ...more });
      const floors = await floorRows({ dev, model, hot: hotSet(Number(args.hot)), load, ttl, missSamples: Number(args["miss-samples"]), startLike });
      rows.push(...floors.rows);
      results.floors = { ...floors.results, seconds: (Date.now() - t0) / 1000 };
      log("floors: what a recording does after the response (own wrangler dev at LOG_LEVEL debug)");
      const recordingWork = await recordingCost(snapshot, model.url, hotSet(30));
      // The capacity model's measured inputs (scripts/capacity.ts reads this committed file).
      writeFileSync(
        "bench/capacity/measured.json",
        `${JSON.stringify({ date: new Date().toISOString(), loadavg: info.loadavg, ttl, ...floors.capacity, recordingWork }, null, 2)}\n`,
      );
      log(`floors rows: ${((Date.now() - t0) / 1000).toFixed(0)} s; wrote bench/capacity/measured.json`);
    }
  } finally {
    await dev.stop();
  }
}
await model.close();

if (sections.has("hot-tree")) {
  log("hot tree: cold hits and misses of one tree at rising rates, before and after (own wrangler devs)");
  const hot = await hotTreeRows(snapshot, hotTreeOptions(args));
  rows.push(...hot.rows);
  results.hotTree = hot.results;
}

if (sections.has("scale")) {
  const scale = await scaleRows(snapshot, {
    rows: args["scale-rows"].split(",").map((r) => r.trim()),
    tallySeconds: Number(args["tally-seconds"]),
    tallyContrastSeconds: Number(args["tally-contrast-seconds"]),
    moveConversations: Number(args["move-conversations"]),
  });
  rows.push(...scale.rows);
  results.scale = scale.results;
}

if (sections.has("replay")) {
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
  const pass = (p: typeof replay.pass1) =>
    `${(p.wallMs / 1000).toFixed(1)} s, ${Math.round((1000 * p.requests) / p.wallMs)} req/s, ${JSON.stringify(p.outcomes)}`;
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
// A partial run (--only) does not overwrite the whole run's file.
const scaleRowsPart = sections.has("scale") && args["scale-rows"] !== "tally,move" ? `-${args["scale-rows"].replace(/[^a-z]+/g, "-")}` : "";
writeFileSync(
  args.only ? `bench-output/bench-${[...sections].join("-")}${scaleRowsPart}.json` : "bench-output/bench.json",
  JSON.stringify({ date: new Date().toISOString(), machine: info, load, args, rows, results }, null, 2),
);
