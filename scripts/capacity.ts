/**
 * `npm run capacity [-- --measure]`: the capacity model of docs/capacity.md, with its arithmetic checked.
 *
 * --measure  first measures D1 locally (Miniflare, in-process, no network): sequential cost of a hit read
 *            and of a recording batch, and throughput of a 90% hit / 10% miss mix over 1..4 D1 databases
 *            (trees sharded with src/store/shards.ts). Writes bench-output/capacity.json.
 * Without it, the last bench-output/capacity.json is used (or the defaults below, flagged as such).
 * Inputs from the workload replay (bench-output/replay.json from `npm run replay`): nodes stored per miss and
 * bytes per node. Platform limits: docs/limits.md.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { Miniflare } from "miniflare";
import { shardOf } from "../src/store/shards";

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
    const call = async (op: string, db: string, tree: string, n = 0) => (await mf.dispatchFetch(`http://cap.local/?op=${op}&db=${db}&tree=${tree}&n=${n}`)).text();
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

/** The model's inputs; each says where it comes from. */
function inputs(measured: Measured | null) {
  const replay = existsSync("bench-output/replay.json") ? (JSON.parse(readFileSync("bench-output/replay.json", "utf8")) as { requests: number; nodes: number; storedBytes: number; requestBytes: number; pass1: { outcomes: Record<string, number> } }) : null;
  const misses = replay ? (replay.pass1.outcomes.miss ?? replay.requests) : 7239;
  return {
    source: { replay: replay ? "bench-output/replay.json" : "defaults (run npm run replay)", d1: measured ? "bench-output/capacity.json" : "defaults (run with --measure)" },
    requestsPerSecond: 10_000,
    hitRate: 0.9,
    nodesPerMiss: replay ? replay.nodes / misses : 2.03,
    bytesPerNode: replay ? replay.storedBytes / replay.nodes : 608,
    requestBytes: replay ? replay.requestBytes / replay.requests : 24_000,
    /** Row, index and page overhead per node: three 64-hex keys, two index entries, integers (schema.ts). */
    overheadPerNode: 400,
    /** Production D1: a 1 ms query => about 1,000 queries/s per database (docs/limits.md). */
    d1QueriesPerSecond: 1_000,
    /** Write statements cost more than reads; measured locally as record batch / hit read. */
    writeCostInReads: measured ? measured.recordMs / measured.readMs : 3,
    replicaRegions: 6,
    dbMaxBytes: 10e9,
    accountMaxBytes: 250e9,
    doRequestsPerSecond: 1_000,
    /** A per-tree recording is serialised in its Durable Object; one D1 round trip from the object (assumed). */
    recordRoundTripMs: 10,
    retentionDays: 30,
    isolates: 300,
    targetUtilisation: 0.7,
  };
}

type Inputs = ReturnType<typeof inputs>;

/** The model: every number in docs/capacity.md, from the inputs. */
export function model(i: Inputs) {
  const hits = i.requestsPerSecond * i.hitRate;
  const misses = i.requestsPerSecond - hits;
  const replicaReads = hits + misses; // every request looks up h_n once on a replica
  const primaryReads = misses * 2; // confirm the replica miss on the primary + existingHashes in record()
  const primaryWrites = misses * (2 + i.nodesPerMiss) + i.isolates; // tree upsert + nodes + counters; one counter batch per isolate-second
  const primaryLoad = primaryReads + primaryWrites * i.writeCostInReads; // in read-query units
  const shardsForWrites = Math.ceil(primaryLoad / (i.d1QueriesPerSecond * i.targetUtilisation));
  const shardsForReadsNoReplicas = Math.ceil((replicaReads + primaryLoad) / (i.d1QueriesPerSecond * i.targetUtilisation));
  const replicaCapacityPerShard = i.d1QueriesPerSecond * i.replicaRegions * i.targetUtilisation;
  const bytesPerDay = misses * 86_400 * i.nodesPerMiss * (i.bytesPerNode + i.overheadPerNode);
  const retainedBytes = bytesPerDay * i.retentionDays;
  const shardsForStorage = Math.ceil(retainedBytes / (i.dbMaxBytes * i.targetUtilisation));
  const daysToFillOneDb = i.dbMaxBytes / bytesPerDay;
  const daysToFillAccount = i.accountMaxBytes / bytesPerDay;
  const perTreeMissCap = Math.min(i.doRequestsPerSecond / 2, 1000 / i.recordRoundTripMs); // claim + record RPCs; serial records
  const hotTreeMaxRps = perTreeMissCap / (1 - i.hitRate);
  const ingressBytesPerSecond = i.requestsPerSecond * i.requestBytes;
  return { hits, misses, replicaReads, primaryReads, primaryWrites, primaryLoad, shardsForWrites, shardsForReadsNoReplicas, replicaCapacityPerShard, bytesPerDay, retainedBytes, shardsForStorage, daysToFillOneDb, daysToFillAccount, perTreeMissCap, hotTreeMaxRps, ingressBytesPerSecond };
}

/** Independent re-computation of the headline numbers: the arithmetic check. */
function check(i: Inputs, m: ReturnType<typeof model>): string[] {
  const fails: string[] = [];
  const near = (name: string, got: number, want: number) => {
    if (Math.abs(got - want) > 1e-6 * Math.max(1, Math.abs(want))) fails.push(`${name}: ${got} != ${want}`);
  };
  near("hits + misses", m.hits + m.misses, i.requestsPerSecond);
  near("misses", m.misses, i.requestsPerSecond * (1 - i.hitRate));
  near("bytes/day", m.bytesPerDay / 86_400 / m.misses, i.nodesPerMiss * (i.bytesPerNode + i.overheadPerNode));
  near("retained", m.retainedBytes, m.bytesPerDay * i.retentionDays);
  if (m.shardsForStorage * i.dbMaxBytes * i.targetUtilisation < m.retainedBytes) fails.push("storage shards too few");
  if ((m.shardsForStorage - 1) * i.dbMaxBytes * i.targetUtilisation >= m.retainedBytes) fails.push("storage shards not minimal");
  if (m.shardsForWrites * i.d1QueriesPerSecond * i.targetUtilisation < m.primaryLoad) fails.push("write shards too few");
  near("hot tree", m.hotTreeMaxRps * (1 - i.hitRate), m.perTreeMissCap);
  return fails;
}

const args = process.argv.slice(2);
let measured: Measured | null = null;
if (args.includes("--measure")) {
  measured = await measure(Number(process.env.CAPACITY_SECONDS ?? 4), Number(process.env.CAPACITY_CONCURRENCY ?? 16));
  mkdirSync("bench-output", { recursive: true });
  writeFileSync("bench-output/capacity.json", JSON.stringify({ date: new Date().toISOString(), ...measured }, null, 2));
} else if (existsSync("bench-output/capacity.json")) {
  measured = JSON.parse(readFileSync("bench-output/capacity.json", "utf8")) as Measured;
}
const i = inputs(measured);
const m = model(i);
if (measured) {
  console.log(`local D1 (Miniflare): hit read ${measured.readMs.toFixed(2)} ms, record ${measured.recordMs.toFixed(2)} ms (sequential)`);
  console.log("| shards | req/s (90% hit, 10% miss) | vs 1 shard |\n| --- | --- | --- |");
  for (const row of measured.mix) console.log(`| ${row.shards} | ${row.rps.toFixed(0)} | ${(row.rps / measured.mix[0].rps).toFixed(2)}x |`);
}
const fmt = (n: number) => (Math.abs(n) >= 100 ? Math.round(n).toLocaleString("en-US") : n.toFixed(2));
console.log("\ninputs:", JSON.stringify(i, null, 1));
console.log("\n| quantity | value |\n| --- | --- |");
for (const [k, v] of Object.entries(m)) console.log(`| ${k} | ${fmt(v)} |`);
console.log("\n| retention | hit rate | GB/day | retained GB | shards for storage | shards for primary load |\n| --- | --- | --- | --- | --- | --- |");
const scenarios: Array<[number, number]> = [[30, 0.9], [7, 0.9], [1, 0.9], [7, 0.99]];
for (const [retentionDays, hitRate] of scenarios) {
  const s = model({ ...i, retentionDays, hitRate });
  console.log(`| ${retentionDays} d | ${hitRate} | ${fmt(s.bytesPerDay / 1e9)} | ${fmt(s.retainedBytes / 1e9)} | ${s.shardsForStorage} | ${s.shardsForWrites} |`);
}
const fails = check(i, m);
if (fails.length) {
  console.error(`capacity: arithmetic check FAILED:\n${fails.join("\n")}`);
  process.exitCode = 1;
} else console.log("\ncapacity: arithmetic checks ok");
