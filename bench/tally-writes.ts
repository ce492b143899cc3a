/**
 * The D1 writes hits cause under 4 isolates' worth of load (bench/scale.ts).
 *
 * Locally one `wrangler dev` is one isolate, so "4 isolates" is reproduced
 * where it matters to D1, at the trees' HitTally objects: the isolate flushes
 * its counters every COUNTER_FLUSH_MS / 4 (250 ms instead of 1 s), so each
 * tree's HitTally receives as many `add` calls per second as from 4 isolates
 * flushing once a second, each carrying every node it served; 4 concurrent
 * load generators each replay the whole hot set (every "isolate" hits every
 * node: the worst case for per-isolate flushing). TALLY_FLUSH_MS is the
 * production environment's (wrangler.toml [env.production.vars]). What it
 * does not reproduce: isolates in several colos (more `add` calls, the same
 * HitTally, so no more D1 writes), and `add` calls lost with an evicted isolate.
 *
 * The writes are counted in D1 itself: triggers (bench/write-log.ts) log
 * every row the counters and the recent-requests table write. A contrast run
 * with TALLY_FLUSH_MS=0 (each isolate flush written at once, i.e. no
 * aggregation) shows what the count sees without the HitTally.
 */
import { readFileSync } from "node:fs";
import { parse } from "smol-toml";
import { startWranglerDev, type WranglerDev } from "../test/support/wrangler-dev";
import { log } from "./http";
import { storeWorkLines } from "./recording-cost";
import { ask, importLines, judge, seedTree, type Probe } from "./scale-seed";
import type { Row } from "./table";
import { bursts, countByTable, maxInWindow, maxPerRow, WRITE_LOG_SQL, type Write } from "./write-log";

const KEY = "Bearer sk-bench-tally";
const MINUTE = 60_000;
const ISOLATES = 4;

export interface TallyOptions {
  /** Seconds of load of the main run (at least one full TALLY_FLUSH_MS interval). */
  seconds: number;
  /** Seconds of load of the TALLY_FLUSH_MS=0 contrast run (0: none); its count is scaled to a minute. */
  contrastSeconds: number;
  trees: number;
  nodesPerTree: number;
  /** TALLY_FLUSH_MS of the main run (default: the production environment's). */
  tallyFlushMs?: number;
}

/** What one run measured. */
interface TallyRun {
  vars: Record<string, string>;
  loadSeconds: number;
  served: { hits: number; wrong: number; misses: number; errors: number };
  distinctNodes: number;
  /** Sum of nodes.hits in D1 after the run, and whether it caught up with the hits served. */
  countedHits: number;
  byTable: Record<string, number>;
  bursts: number;
  busiestMinute: { all: number; counters: number; nodes: number };
  maxWritesOfOneNodePerMinute: number;
  /** The rows D1 billed for the HitTally writes (their `tally.flush` store_work lines at LOG_LEVEL debug: D1's own meta). */
  billed: { writes: number; rowsWritten: number; rowsRead: number; maxWrittenPerWrite: number };
}

/** The production TALLY_FLUSH_MS, from the repo's wrangler.toml. */
export function productionTallyFlushMs(): number {
  const toml = parse(readFileSync("wrangler.toml", "utf8")) as { env?: { production?: { vars?: Record<string, string> } } };
  return Number(toml.env?.production?.vars?.TALLY_FLUSH_MS ?? 60_000);
}

const shuffled = <T>(xs: readonly T[]): T[] => {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
};

async function sumHits(dev: WranglerDev): Promise<number> {
  const [row] = await dev.sql("SELECT coalesce(sum(hits), 0) AS n FROM nodes");
  return Number(row?.n ?? 0);
}

async function oneRun(
  snapshot: { dir: string; config: string },
  vars: Record<string, string>,
  seconds: number,
  opts: TallyOptions,
  waitForFlush: boolean,
): Promise<TallyRun> {
  // wrangler's "log" level: the Worker's debug lines (the tally writes' store_work) reach dev.output().
  const dev = await startWranglerDev({ config: snapshot.config, vars: { IMPORT_TENANTS: "*", ...vars }, logLevel: "log" });
  try {
    const probes: Array<Probe & { namespace: string }> = [];
    for (let t = 0; t < opts.trees; t++) {
      const seed = seedTree("tally-model", opts.nodesPerTree, { turns: 1, tag: `tally-${t}` });
      await importLines(dev.url, KEY, `tally-${t}`, seed.lines);
      probes.push(...seed.probes.map((p) => ({ ...p, namespace: `tally-${t}` })));
    }
    await dev.sql(WRITE_LOG_SQL);
    const served = { hits: 0, wrong: 0, misses: 0, errors: 0 };
    const nodes = new Set<string>();
    const started = Date.now();
    const deadline = started + seconds * 1000;
    const generator = async () => {
      while (Date.now() < deadline) {
        for (const p of shuffled(probes)) {
          if (Date.now() >= deadline) break;
          const a = await ask(dev.url, KEY, p.namespace, p.body).catch(() => null);
          const verdict = a ? judge(p, a) : "error";
          if (verdict === "right" && a?.node) {
            served.hits++;
            nodes.add(a.node);
          } else if (verdict === "wrong") served.wrong++;
          else if (verdict === "miss") served.misses++;
          else served.errors++;
        }
      }
    };
    await Promise.all(Array.from({ length: ISOLATES }, generator));
    const loadSeconds = (Date.now() - started) / 1000;
    // The last counts reach D1 with the HitTally's next write: wait for it (at most one interval and a flush).
    let countedHits = await sumHits(dev);
    const until = Date.now() + Number(vars.TALLY_FLUSH_MS) + 15_000;
    while (waitForFlush && countedHits < served.hits && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 2000));
      countedHits = await sumHits(dev);
    }
    const writes = (await dev.sql("SELECT at, tbl, key FROM bench_writes")).map((r) => ({
      at: Number(r.at),
      tbl: String(r.tbl),
      key: String(r.key),
    })) as Write[];
    const counters = (w: Write) => w.tbl === "nodes" || w.tbl === "trees" || w.tbl === "templates";
    const flushes = storeWorkLines(dev.output()).filter((w) => w.object === "tally");
    return {
      vars,
      loadSeconds,
      served,
      distinctNodes: nodes.size,
      countedHits,
      byTable: countByTable(writes),
      bursts: bursts(writes),
      busiestMinute: {
        all: maxInWindow(writes, MINUTE),
        counters: maxInWindow(writes, MINUTE, counters),
        nodes: maxInWindow(writes, MINUTE, (w) => w.tbl === "nodes"),
      },
      maxWritesOfOneNodePerMinute: maxPerRow(writes, "nodes", MINUTE),
      billed: {
        writes: flushes.length,
        rowsWritten: flushes.reduce((a, w) => a + (w.d1_rows_written ?? 0), 0),
        rowsRead: flushes.reduce((a, w) => a + (w.d1_rows_read ?? 0), 0),
        maxWrittenPerWrite: Math.max(0, ...flushes.map((w) => w.d1_rows_written ?? 0)),
      },
    };
  } finally {
    await dev.stop();
  }
}

const perMin = (n: number, seconds: number) => Math.round((n * 60) / seconds);

/** The rows: hit-caused D1 rows per minute against the distinct nodes hit, and the contrast without aggregation. */
export async function tallyRows(snapshot: { dir: string; config: string }, opts: TallyOptions): Promise<{ rows: Row[]; results: Record<string, unknown> }> {
  const tallyFlushMs = opts.tallyFlushMs ?? productionTallyFlushMs();
  // debug: each HitTally write logs its billed rows (a `tally.flush` store_work line); it also logs every request line.
  // KEY_FRESH_MS 0: the bench's made-up keys never reach a provider, and its trees are imported with them.
  const base = { COUNTER_FLUSH_MS: String(1000 / ISOLATES), LOG_LEVEL: "debug", KEY_FRESH_MS: "0" };
  log(
    `tally: ${opts.trees} trees × ${opts.nodesPerTree} nodes, ${ISOLATES} generators, ${opts.seconds} s, TALLY_FLUSH_MS=${tallyFlushMs}, COUNTER_FLUSH_MS=${base.COUNTER_FLUSH_MS}`,
  );
  const main = await oneRun(snapshot, { ...base, TALLY_FLUSH_MS: String(tallyFlushMs) }, opts.seconds, opts, true);
  log("tally run", main);
  const contrast = opts.contrastSeconds > 0 ? await oneRun(snapshot, { ...base, TALLY_FLUSH_MS: "0" }, opts.contrastSeconds, opts, false) : null;
  if (contrast) log("tally contrast run", contrast);
  const n = main.distinctNodes;
  const t = main.byTable;
  const served = `${main.served.hits} hits in ${main.loadSeconds.toFixed(0)} s (${Math.round(main.served.hits / main.loadSeconds)}/s), wrong ${main.served.wrong}, misses ${main.served.misses}, errors ${main.served.errors}`;
  const breakdown = `rows written in all: nodes ${t.nodes ?? 0}, trees ${t.trees ?? 0}, templates ${t.templates ?? 0}, recent_requests inserted ${t.recent_insert ?? 0} / deleted ${t.recent_delete ?? 0}, in ${main.bursts} bursts (≈ D1 batches)`;
  const counts = `D1 nodes.hits sum ${main.countedHits} of ${main.served.hits} hits served`;
  const label = `${ISOLATES} isolates' hit load (COUNTER_FLUSH_MS ${base.COUNTER_FLUSH_MS}, TALLY_FLUSH_MS ${tallyFlushMs}), ${opts.trees} trees`;
  const rows: Row[] = [
    {
      row: `${label}: hit-caused D1 row writes in the busiest minute (counters + recent requests) vs distinct nodes hit`,
      target: "≤ distinct nodes hit",
      value: `${main.busiestMinute.all} vs ${n}`,
      met: main.busiestMinute.all <= n,
      detail: `${served}; ${breakdown}; ${counts}`,
    },
    {
      row: `${label}: hit counter row writes (nodes, trees, templates) in the busiest minute vs distinct nodes hit`,
      target: "≤ distinct nodes hit",
      value: `${main.busiestMinute.counters} vs ${n}`,
      met: main.busiestMinute.counters <= n,
      detail: `node rows ${main.busiestMinute.nodes}, the rest tree and template rows`,
    },
    {
      row: `${label}: writes of any one node's row per minute`,
      target: "≤ 1",
      value: String(main.maxWritesOfOneNodePerMinute),
      met: main.maxWritesOfOneNodePerMinute <= 1,
      detail: `busiest 60 s window, from the D1 write log`,
    },
  ];
  const billed = main.billed;
  rows.push({
    row: `${label}: rows D1 billed for the hit counters' writes (D1's own meta, tally.flush lines), the largest one tree's write, vs distinct nodes hit + 2 per tree + its recent-requests rows`,
    target: "report",
    value: `${billed.maxWrittenPerWrite} written (largest write) vs ${n} nodes`,
    met: null,
    detail: `${billed.writes} writes (one per tree per TALLY_FLUSH_MS): ${billed.rowsWritten} rows written, ${billed.rowsRead} read in all; a write is at most one interval's counts of its tree`,
  });
  if (contrast) {
    const c = contrast.byTable;
    const all = Object.values(c).reduce((a, b) => a + b, 0);
    rows.push({
      row: `contrast: the same load with TALLY_FLUSH_MS 0 (each isolate flush written at once, no aggregation): hit-caused row writes per minute vs distinct nodes hit`,
      target: "report",
      value: `${perMin(all, contrast.loadSeconds)} vs ${contrast.distinctNodes}`,
      met: null,
      detail: `scaled from ${contrast.loadSeconds.toFixed(0)} s: nodes ${c.nodes ?? 0}, trees ${c.trees ?? 0}, recent ${c.recent_insert ?? 0} / ${c.recent_delete ?? 0}; ${contrast.served.hits} hits`,
    });
  }
  return { rows, results: { main, contrast } };
}
