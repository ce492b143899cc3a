/**
 * `npm run capacity [-- --measure]`: the capacity model of docs/capacity.md, with its arithmetic checked.
 *
 * The model reads only committed inputs, so a fresh clone prints the doc's numbers:
 * bench/capacity/measured.json (store calls per hit, miss and recording, counted from `server-timing`
 * by `npm run bench -- --only floors`) and bench/capacity/platform.json (prices, limits, workload and
 * the assumptions, each with its source).
 *
 * --measure  also measures D1 locally (Miniflare, in-process, no network): sequential cost of a hit read
 *            and of a recording batch, and throughput of a 90% hit / 10% miss mix over 1..4 D1 databases
 *            (trees sharded with src/store/shards/shards.ts); printed and written to bench-output/capacity.json,
 *            not fed into the model.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { Miniflare } from "miniflare";
import { shardOf } from "../src/store/shards/shards";

interface Measured {
  readMs: number;
  recordMs: number;
  mix: Array<{ shards: number; rps: number; requests: number }>;
}

const WORKER = `
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const db = env[url.searchParams.get("db")];
    const op = url.searchParams.get("op");
    const tree = url.searchParams.get("tree");
    if (op === "setup") {
      await db.batch([
        db.prepare("CREATE TABLE IF NOT EXISTS nodes (hash TEXT PRIMARY KEY, parent TEXT NOT NULL, tree_id TEXT NOT NULL, role TEXT, message TEXT, observations INTEGER DEFAULT 0)"),
        db.prepare("CREATE INDEX IF NOT EXISTS nodes_parent_idx ON nodes (parent, role)"),
        db.prepare("CREATE TABLE IF NOT EXISTS trees (id TEXT PRIMARY KEY, misses INTEGER DEFAULT 0)"),
      ]);
      return new Response("ok");
    }
    const parent = tree + ":" + url.searchParams.get("n");
    if (op === "hit") {
      const rows = await db.prepare("SELECT hash, message FROM nodes WHERE parent = ?1 AND role = 'assistant'").bind(parent).all();
      return new Response(String(rows.results.length));
    }
    const id = crypto.randomUUID();
    const message = "x".repeat(600);
    await db.prepare("SELECT hash FROM nodes WHERE hash IN (?1, ?2)").bind(id + "u", id + "a").all();
    await db.batch([
      db.prepare("INSERT INTO trees (id) VALUES (?1) ON CONFLICT DO NOTHING").bind(tree),
      db.prepare("INSERT INTO nodes (hash, parent, tree_id, role, message) VALUES (?1, ?2, ?3, 'user', ?4) ON CONFLICT DO NOTHING").bind(id + "u", parent, tree, message),
      db.prepare("INSERT INTO nodes (hash, parent, tree_id, role, message, observations) VALUES (?1, ?2, ?3, 'assistant', ?4, 1) ON CONFLICT DO NOTHING").bind(id + "a", id + "u", tree, message),
      db.prepare("UPDATE trees SET misses = misses + 1 WHERE id = ?1").bind(tree),
    ]);
    return new Response("recorded");
  },
};`;

const NAMES = ["DB", "DB_1", "DB_2", "DB_3"];
const TREES = Array.from({ length: 64 }, (_, i) => `tree-${i.toString(16).padStart(4, "0")}`);

async function measure(seconds: number, concurrency: number): Promise<Measured> {
  const mf = new Miniflare({ modules: true, script: WORKER, d1Databases: NAMES, compatibilityDate: "2026-05-01" });
  try {
    const call = async (op: string, db: string, tree: string, n = 0) =>
      (await mf.dispatchFetch(`http://cap.local/?op=${op}&db=${db}&tree=${tree}&n=${n}`)).text();
    for (const db of NAMES) await call("setup", db, "-");
    const time = async (op: string, rounds: number) => {
      const start = performance.now();
      for (let i = 0; i < rounds; i++) await call(op, "DB", TREES[i % TREES.length], i);
      return (performance.now() - start) / rounds;
    };
    await time("miss", 50);
    const readMs = await time("hit", 300);
    const recordMs = await time("miss", 150);
    const mix: Measured["mix"] = [];
    for (let shards = 1; shards <= NAMES.length; shards++) {
      const names = NAMES.slice(0, shards);
      let done = 0;
      const deadline = performance.now() + seconds * 1000;
      const worker = async (w: number) => {
        for (let i = 0; performance.now() < deadline; i++) {
          const tree = TREES[(w * 7 + i) % TREES.length];
          await call(i % 10 === 0 ? "miss" : "hit", shardOf(names, tree), tree, i % 50);
          done++;
        }
      };
      const start = performance.now();
      await Promise.all(Array.from({ length: concurrency }, (_, w) => worker(w)));
      mix.push({ shards, rps: done / ((performance.now() - start) / 1000), requests: done });
    }
    return { readMs, recordMs, mix };
  } finally {
    await mf.dispose();
  }
}

const DIR = resolve(import.meta.dirname, "../bench/capacity");
type PerRequest = { responses: number; d1Queries: number; doCalls: number; coloReads: number };
/** What a recording does after the response, in the tree's objects (bench/recording-cost.ts: their debug `store_work` lines). */
type RecordingWork = { misses: number; d1QueriesPerMiss: number; doCallsPerMiss: number; byCall?: Record<string, { calls: number; d1QueriesPerCall: number }> };
interface MeasuredCounts {
  date: string;
  hitWarm: PerRequest;
  hitColo: PerRequest;
  hitCold: PerRequest;
  miss: { responses: number; d1Queries: number; doCalls: number };
  /** A learned-template hit and a miss in a tree with live templates (bench/template-cost.ts); absent in files measured before them. */
  templateHit?: PerRequest;
  templateMiss?: PerRequest;
  recording: { misses: number; nodesWrittenPerMiss: number; rowsInsertedPerMiss?: Record<string, number> };
  recordingWork?: RecordingWork;
}
type Platform = typeof import("../bench/capacity/platform.json");

/** The committed inputs. */
export function loadInputs(): { counts: MeasuredCounts; platform: Platform } {
  const read = <T>(name: string) => JSON.parse(readFileSync(resolve(DIR, name), "utf8")) as T;
  return { counts: read<MeasuredCounts>("measured.json"), platform: read<Platform>("platform.json") };
}

const MONTH_S = 30 * 86_400;
const over = (used: number, included: number, perMillion: number) => (Math.max(0, used - included) / 1e6) * perMillion;
/** A class with no measured response (null in JSON) counts as its cold neighbour would: conservative. */
const per = (x: number | null | undefined, fallback: number) => (typeof x === "number" && Number.isFinite(x) ? x : fallback);
const sum = (rows: Record<string, number>) => Object.values(rows).reduce((a, b) => a + b, 0);

/** The template and recording inputs: measured when measured.json has them, else platform.json's `unmeasured` stand-ins (said so in the report). */
function workOf(counts: MeasuredCounts, p: Platform) {
  const u = p.unmeasured;
  return {
    templateHit: counts.templateHit?.responses ? counts.templateHit : { responses: 0, ...u.templateHit },
    templateMiss: counts.templateMiss?.responses ? counts.templateMiss : { responses: 0, ...u.templateMiss },
    recording: counts.recordingWork?.misses
      ? counts.recordingWork
      : { misses: 0, d1QueriesPerMiss: u.recordingWork.d1QueriesPerMiss, doCallsPerMiss: u.recordingWork.doCallsPerMiss },
    rowsInsertedPerMiss: counts.recording.rowsInsertedPerMiss ?? { nodes: counts.recording.nodesWrittenPerMiss },
  };
}

/** The model: every number in docs/capacity.md's model tables, from the inputs. */
export function model(counts: MeasuredCounts, p: Platform, workload: Platform["workload"] = p.workload) {
  const a = p.assumptions;
  const w = workOf(counts, p);
  const hits = workload.requestsPerSecond * workload.hitRate;
  const misses = workload.requestsPerSecond - hits;
  const mix = a.hitMix;
  const cold = counts.hitCold;
  const exactD1 =
    mix.warm * per(counts.hitWarm.d1Queries, cold.d1Queries) + mix.colo * per(counts.hitColo.d1Queries, cold.d1Queries) + mix.cold * cold.d1Queries;
  const exactDo = mix.warm * per(counts.hitWarm.doCalls, cold.doCalls) + mix.colo * per(counts.hitColo.doCalls, cold.doCalls) + mix.cold * cold.doCalls;
  const exactCache = mix.warm * per(counts.hitWarm.coloReads, 1) + mix.colo * per(counts.hitColo.coloReads, 1) + mix.cold * per(cold.coloReads, 1);
  // Hits: exact ones by the warm/colo/cold mix, and the share a learned template serves (each a cold exact lookup, then the template read).
  const t = a.templates;
  const hitD1 = (1 - t.hitShare) * exactD1 + t.hitShare * w.templateHit.d1Queries;
  const hitDo = (1 - t.hitShare) * exactDo + t.hitShare * w.templateHit.doCalls;
  const hitCache = (1 - t.hitShare) * exactCache + t.hitShare * w.templateHit.coloReads;
  // Misses before they forward: in a tree without live templates, and in one with them (the template read and a second call).
  const missD1 = (1 - t.missShare) * counts.miss.d1Queries + t.missShare * w.templateMiss.d1Queries;
  const missDo = (1 - t.missShare) * counts.miss.doCalls + t.missShare * w.templateMiss.doCalls;
  const nodesPerMiss = counts.recording.nodesWrittenPerMiss;
  // Queries a second on the shards' primaries: before the responses (lookups), and after them (each recording's statements, every one counted as a query).
  const d1Reads = hits * hitD1 + misses * missD1;
  const d1RecordingQueries = misses * w.recording.d1QueriesPerMiss;
  const primaryLoad = d1Reads + d1RecordingQueries + a.hitCounterRowsPerSecond / 50; // counters: 50 rows a batch
  const shardsForLoad = Math.ceil(primaryLoad / (p.limits.d1QueriesPerSecond * p.limits.targetUtilisation));
  const rowsWrittenPerSecond = misses * (sum(w.rowsInsertedPerMiss) + a.rowsUpdatedPerRecording) + a.hitCounterRowsPerSecond;
  const bytesPerDay = misses * 86_400 * nodesPerMiss * (workload.bytesPerNode + workload.overheadPerNode);
  const retainedBytes = bytesPerDay * workload.retentionDays;
  const shardsForStorage = Math.ceil(retainedBytes / (p.limits.dbMaxBytes * p.limits.targetUtilisation));
  const shards = Math.max(shardsForLoad, shardsForStorage);
  const doCallsPerSecond = hits * (hitDo + a.hitTallyCallsPerHit) + misses * (missDo + w.recording.doCallsPerMiss);
  const perTreeMissCap = Math.min(p.limits.doRequestsPerSecond / Math.max(1, missDo + 1), 1000 / a.recordRoundTripMs);
  const pr = p.prices;
  const requestsMonth = workload.requestsPerSecond * MONTH_S;
  const cost = {
    workers:
      pr.workersBasePerMonth +
      over(requestsMonth, pr.workersRequestsIncluded, pr.workersPerMillionRequests) +
      over(requestsMonth * a.cpuMsPerRequest, pr.workersCpuMsIncluded, pr.workersPerMillionCpuMs),
    d1Reads: over((d1Reads + d1RecordingQueries) * MONTH_S * a.rowsReadPerQuery, pr.d1RowsReadIncluded, pr.d1PerMillionRowsRead),
    d1Writes: over(rowsWrittenPerSecond * MONTH_S, pr.d1RowsWrittenIncluded, pr.d1PerMillionRowsWritten),
    d1Storage: Math.max(0, retainedBytes / 1e9 - pr.d1StorageIncludedGB) * pr.d1PerGBMonth,
    durableObjects: over(doCallsPerSecond * MONTH_S, pr.doRequestsIncluded, pr.doPerMillionRequests),
    cacheApi: 0,
  };
  const total = Object.values(cost).reduce((x, y) => x + y, 0);
  return {
    hits,
    misses,
    hitD1,
    hitDo,
    hitCache,
    missD1,
    missDo,
    d1Reads,
    d1RecordingQueries,
    primaryLoad,
    shardsForLoad,
    rowsWrittenPerSecond,
    bytesPerDay,
    retainedBytes,
    shardsForStorage,
    shards,
    doCallsPerSecond,
    perTreeMissCap,
    hotTreeMaxRps: perTreeMissCap / (1 - workload.hitRate),
    cost,
    total,
    perShard: (cost.d1Reads + cost.d1Writes + cost.d1Storage) / shards,
  };
}

/** Independent re-computation of the headline numbers: the arithmetic check. */
function check(p: Platform, m: ReturnType<typeof model>): string[] {
  const fails: string[] = [];
  const w = p.workload;
  if (Math.abs(m.hits + m.misses - w.requestsPerSecond) > 1e-6) fails.push("hits + misses");
  if (m.shardsForStorage * p.limits.dbMaxBytes * p.limits.targetUtilisation < m.retainedBytes) fails.push("storage shards too few");
  if ((m.shardsForStorage - 1) * p.limits.dbMaxBytes * p.limits.targetUtilisation >= m.retainedBytes) fails.push("storage shards not minimal");
  if (m.shardsForLoad * p.limits.d1QueriesPerSecond * p.limits.targetUtilisation < m.primaryLoad) fails.push("load shards too few");
  const sum = Object.values(m.cost).reduce((x, y) => x + y, 0);
  if (Math.abs(sum - m.total) > 1e-6) fails.push("cost total");
  return fails;
}

const fmt = (n: number) => (Math.abs(n) >= 100 ? Math.round(n).toLocaleString("en-US") : n.toFixed(2));
const usd = (n: number) => `$${Math.round(n).toLocaleString("en-US")}`;

/** The Markdown the doc carries, line for line (test/e2e/capacity.e2e.test.ts compares them). */
export function report(counts: MeasuredCounts, p: Platform): string {
  const m = model(counts, p);
  const w = workOf(counts, p);
  const stand = "not in measured.json yet: platform.json `unmeasured`";
  const c = (x: PerRequest) =>
    x.responses ? `${fmt(x.d1Queries)} / ${fmt(x.doCalls)} / ${fmt(x.coloReads)} (${x.responses} responses)` : "not observed: counted as a cold hit";
  const t = (x: PerRequest) => `${fmt(x.d1Queries)} / ${fmt(x.doCalls)} / ${fmt(x.coloReads)} (${x.responses ? `${x.responses} responses` : stand})`;
  const r = w.recording;
  const calls = counts.recordingWork?.byCall
    ? `; ${Object.entries(counts.recordingWork.byCall)
        .map(([k, v]) => `${k} ${fmt(v.d1QueriesPerCall)}`)
        .join(", ")} queries a call`
    : "";
  const inserted = Object.entries(w.rowsInsertedPerMiss)
    .filter(([, v]) => v > 0)
    .map(([k, v]) => `${k} ${fmt(v)}`)
    .join(", ");
  const a = p.assumptions;
  const lines = [
    `Store calls per request, measured ${counts.date} (bench/capacity/measured.json), D1 queries / DO calls / Cache API reads (D1 queries: the Worker's and those the tree's object made for the request):`,
    "",
    "| request | D1 / DO / Cache API |",
    "| --- | --- |",
    `| hit from isolate memory (warm) | ${c(counts.hitWarm)} |`,
    `| hit from the colo's Cache API | ${c(counts.hitColo)} |`,
    `| hit from D1 (cold) | ${c(counts.hitCold)} |`,
    `| learned-template hit (exact lookup, then the template read) | ${t(w.templateHit)} |`,
    `| miss, before it forwards | ${fmt(counts.miss.d1Queries)} / ${fmt(counts.miss.doCalls)} / - (${counts.miss.responses} responses) |`,
    `| miss in a tree with live templates, before it forwards | ${t(w.templateMiss)} |`,
    `| recording, after the response (the tree's objects) | ${fmt(r.d1QueriesPerMiss)} / ${fmt(r.doCallsPerMiss)} / - per miss (${r.misses ? `${r.misses} misses${calls}` : stand}) |`,
    `| recording: rows inserted per miss | ${inserted} (${counts.recording.misses} misses) |`,
    "",
    `| quantity (${fmt(p.workload.requestsPerSecond)} req/s, ${p.workload.hitRate} hit rate) | value |`,
    "| --- | --- |",
    `| hits / misses per second | ${fmt(m.hits)} / ${fmt(m.misses)} |`,
    `| D1 queries per hit (mix ${a.hitMix.warm}/${a.hitMix.colo}/${a.hitMix.cold} warm/colo/cold; ${a.templates.hitShare} of hits from learned templates) | ${m.hitD1.toFixed(3)} |`,
    `| D1 queries per miss before it forwards (${a.templates.missShare} of misses in trees with live templates) | ${m.missD1.toFixed(3)} |`,
    `| D1 queries per second before the responses | ${fmt(m.d1Reads)} |`,
    `| D1 queries per second after the responses (recordings) | ${fmt(m.d1RecordingQueries)} |`,
    `| D1 rows written per second (recordings' inserts and updates, hit counters) | ${fmt(m.rowsWrittenPerSecond)} |`,
    `| primary load, queries per second | ${fmt(m.primaryLoad)} |`,
    `| shards for the load | ${m.shardsForLoad} |`,
    `| storage growth per day | ${fmt(m.bytesPerDay / 1e9)} GB |`,
    `| shards for ${p.workload.retentionDays} days of retention | ${m.shardsForStorage} |`,
    `| **shards** | **${m.shards}** |`,
    `| Durable Object calls per second (lookups, recordings, hit tallies) | ${fmt(m.doCallsPerSecond)} |`,
    `| Cache API reads per hit | ${m.hitCache.toFixed(2)} |`,
    `| hottest tree | ${fmt(m.hotTreeMaxRps)} req/s (${fmt(m.perTreeMissCap)} misses/s) |`,
    "",
    "| cost per month, Workers Paid | USD |",
    "| --- | --- |",
    ...Object.entries(m.cost).map(([k, v]) => `| ${k} | ${usd(v)} |`),
    `| **total** | **${usd(m.total)}** |`,
    `| D1 per shard (${m.shards} shards) | ${usd(m.perShard)} |`,
    "",
    "| retention | hit rate | GB/day | retained GB | shards for storage | shards for load | total per month |",
    "| --- | --- | --- | --- | --- | --- | --- |",
  ];
  for (const [retentionDays, hitRate] of [
    [30, 0.9],
    [7, 0.9],
    [1, 0.9],
    [7, 0.99],
  ]) {
    const s = model(counts, p, { ...p.workload, retentionDays, hitRate });
    lines.push(
      `| ${retentionDays} d | ${hitRate} | ${fmt(s.bytesPerDay / 1e9)} | ${fmt(s.retainedBytes / 1e9)} | ${s.shardsForStorage} | ${s.shardsForLoad} | ${usd(s.total)} |`,
    );
  }
  const fails = check(p, m);
  if (fails.length) throw new Error(`capacity: arithmetic check FAILED: ${fails.join("; ")}`);
  return lines.join("\n");
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.dirname, "capacity.ts")) {
  if (process.argv.includes("--measure")) {
    const measured = await measure(Number(process.env.CAPACITY_SECONDS ?? 4), Number(process.env.CAPACITY_CONCURRENCY ?? 16));
    mkdirSync("bench-output", { recursive: true });
    writeFileSync("bench-output/capacity.json", JSON.stringify({ date: new Date().toISOString(), ...measured }, null, 2));
    console.log(`local D1 (Miniflare): hit read ${measured.readMs.toFixed(2)} ms, record ${measured.recordMs.toFixed(2)} ms (sequential)`);
    console.log("| shards | req/s (90% hit, 10% miss) | vs 1 shard |\n| --- | --- | --- |");
    for (const row of measured.mix) console.log(`| ${row.shards} | ${row.rps.toFixed(0)} | ${(row.rps / measured.mix[0].rps).toFixed(2)}x |`);
    console.log("");
  }
  const { counts, platform } = loadInputs();
  console.log(report(counts, platform));
  console.log("\ncapacity: arithmetic checks ok");
}
