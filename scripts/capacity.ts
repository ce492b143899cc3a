/**
 * `npm run capacity [-- --measure]`: the capacity model of docs/capacity.md, with its arithmetic checked.
 *
 * The model (scripts/capacity-model.ts, printed by scripts/capacity-report.ts) reads only committed inputs,
 * so a fresh clone prints the doc's numbers: bench/capacity/measured.json (store calls and the rows D1 billed
 * for them per hit, miss and recording, from `server-timing` and the objects' `store_work` lines, by
 * `npm run bench -- --only floors`) and bench/capacity/platform.json (prices with their pages, limits,
 * D1's meta for single statements, the workload and the assumptions, each with its source).
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
import { loadInputs } from "./capacity-model";
import { report } from "./capacity-report";

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

export { loadInputs } from "./capacity-model";
export { report } from "./capacity-report";

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
