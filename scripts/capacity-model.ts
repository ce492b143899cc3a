/**
 * The capacity model of docs/capacity.md: what 10k req/s at 90% hits costs in what Cloudflare bills
 * (D1 rows read and written, Durable Object requests, duration and storage rows, Analytics Engine points,
 * Workers requests and CPU), from committed inputs only: bench/capacity/measured.json (per request, from
 * `server-timing`, and per recording, from the objects' `store_work` lines: D1's own billed rows) and
 * bench/capacity/platform.json (prices with their pages, limits, D1's meta for single statements, assumptions).
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";

const DIR = resolve(import.meta.dirname, "../bench/capacity");
type Rows = { rowsRead?: number; rowsWritten?: number };
type PerRequest = { responses: number; d1Queries: number | null; doCalls: number | null; coloReads: number | null } & Rows;
type CallCost = { calls: number; d1QueriesPerCall: number; rowsReadPerCall?: number; rowsWrittenPerCall?: number };
/** What a recording does after the response (bench/recording-cost.ts: the `store_work` lines). */
type RecordingWork = {
  misses: number;
  d1QueriesPerMiss: number;
  doCallsPerMiss: number;
  rowsReadPerMiss?: number;
  rowsWrittenPerMiss?: number;
  workerAfter?: { d1QueriesPerMiss: number; rowsReadPerMiss: number; rowsWrittenPerMiss: number };
  tally?: { flushes: number; d1QueriesPerFlush: number; rowsReadPerFlush: number; rowsWrittenPerFlush: number };
  byCall?: Record<string, CallCost>;
};
export interface MeasuredCounts {
  date: string;
  hitWarm: PerRequest;
  hitColo: PerRequest;
  hitCold: PerRequest;
  miss: { responses: number; d1Queries: number; doCalls: number } & Rows;
  templateHit?: PerRequest;
  templateMiss?: PerRequest;
  recording: { misses: number; nodesWrittenPerMiss: number; rowsInsertedPerMiss?: Record<string, number> };
  recordingWork?: RecordingWork;
}
export type Platform = typeof import("../bench/capacity/platform.json");

/** The committed inputs. */
export function loadInputs(): { counts: MeasuredCounts; platform: Platform } {
  const read = <T>(name: string) => JSON.parse(readFileSync(resolve(DIR, name), "utf8")) as T;
  return { counts: read<MeasuredCounts>("measured.json"), platform: read<Platform>("platform.json") };
}

const MONTH_S = 30 * 86_400;
const over = (used: number, included: number, perMillion: number) => (Math.max(0, used - included) / 1e6) * perMillion;
const num = (x: number | null | undefined, fallback: number) => (typeof x === "number" && Number.isFinite(x) ? x : fallback);
type Cls = { d1: number; do: number; colo: number; r: number; w: number; measured: boolean; responses: number };

/** A request class: measured when it had responses (rows measured when the file has them), else the stand-in. */
function cls(x: PerRequest | undefined, stand: { d1Queries: number; doCalls: number; coloReads: number } & Rows, p: Platform): Cls {
  const u = p.unmeasured.rows;
  if (x?.responses) {
    const rowsMeasured = typeof x.rowsRead === "number";
    // A class that made no D1 query was billed no row, measured or not.
    const none = num(x.d1Queries, stand.d1Queries) === 0;
    return {
      d1: num(x.d1Queries, stand.d1Queries),
      do: num(x.doCalls, stand.doCalls),
      colo: num(x.coloReads, stand.coloReads),
      r: rowsMeasured ? num(x.rowsRead, 0) : none ? 0 : num(stand.rowsRead, u.rowsRead),
      w: rowsMeasured ? num(x.rowsWritten, 0) : none ? 0 : num(stand.rowsWritten, u.rowsWritten),
      measured: rowsMeasured || none,
      responses: x.responses,
    };
  }
  return {
    d1: stand.d1Queries,
    do: stand.doCalls,
    colo: stand.coloReads,
    r: num(stand.rowsRead, u.rowsRead),
    w: num(stand.rowsWritten, u.rowsWritten),
    measured: false,
    responses: 0,
  };
}

/** The per-request and per-recording inputs, measured or stand-ins (the report says which). */
export function inputsOf(counts: MeasuredCounts, p: Platform) {
  const u = p.unmeasured;
  const cold = cls(counts.hitCold, { ...u.templateHit, d1Queries: 2, doCalls: 1 }, p);
  // A warm or colo class with no response counts as a cold hit would: conservative.
  const like = { d1Queries: cold.d1, doCalls: cold.do, coloReads: 1, rowsRead: cold.r, rowsWritten: cold.w };
  const miss = counts.miss;
  const rw = counts.recordingWork;
  const rowsMeasured = typeof rw?.rowsWrittenPerMiss === "number";
  return {
    warm: cls(counts.hitWarm, like, p),
    colo: cls(counts.hitColo, like, p),
    cold,
    templateHit: cls(counts.templateHit, u.templateHit, p),
    templateMiss: cls(counts.templateMiss, u.templateMiss, p),
    miss: cls({ ...miss, coloReads: 0 }, { d1Queries: miss.d1Queries, doCalls: miss.doCalls, coloReads: 0 }, p),
    recording: {
      measured: Boolean(rw?.misses) && rowsMeasured,
      misses: rw?.misses ?? 0,
      d1: rw?.misses ? rw.d1QueriesPerMiss : u.recordingWork.d1QueriesPerMiss,
      do: rw?.misses ? rw.doCallsPerMiss : u.recordingWork.doCallsPerMiss,
      r: rowsMeasured ? num(rw?.rowsReadPerMiss, 0) : u.recordingWork.rowsReadPerMiss,
      w: rowsMeasured ? num(rw?.rowsWrittenPerMiss, 0) : u.recordingWork.rowsWrittenPerMiss,
      after: rw?.workerAfter ?? { d1QueriesPerMiss: 0, rowsReadPerMiss: 0, rowsWrittenPerMiss: 0 },
      tally: rw?.tally,
      byCall: rw?.byCall,
    },
    nodesPerMiss: counts.recording.nodesWrittenPerMiss,
  };
}

/** The model: every number in docs/capacity.md's model tables, from the inputs. */
export function model(counts: MeasuredCounts, p: Platform, workload: Platform["workload"] = p.workload) {
  const a = p.assumptions;
  const b = p.billedRows;
  const x = inputsOf(counts, p);
  const rps = workload.requestsPerSecond;
  const hits = rps * workload.hitRate;
  const misses = rps - hits;
  const mix = a.hitMix;
  const t = a.templates;
  const exact = (k: "d1" | "do" | "colo" | "r" | "w") => mix.warm * x.warm[k] + mix.colo * x.colo[k] + mix.cold * x.cold[k];
  const hit = (k: "d1" | "do" | "colo" | "r" | "w") => (1 - t.hitShare) * exact(k) + t.hitShare * x.templateHit[k];
  const miss = (k: "d1" | "do" | "r" | "w") => (1 - t.missShare) * x.miss[k] + t.missShare * x.templateMiss[k];
  const rec = x.recording;
  // Hit counters and the recent-requests table, per second for the whole deployment (one write per node and per tree a minute).
  const c = a.counters;
  const flushes = c.activeTreesPerMinute / 60;
  const recentRow = b.recentRowInsert.written + b.recentRowDelete.written; // its insert, and once the table is full its trim's delete
  const counters = {
    written: (c.distinctNodesHitPerMinute * b.nodeCounterUpdate.written) / 60 + flushes * (b.treeCounterUpdate.written + c.recentRowsPerTreeFlush * recentRow),
    read: (c.distinctNodesHitPerMinute * b.nodeCounterUpdate.read) / 60 + flushes * b.recentTrimReadPerFlush,
    statements: c.distinctNodesHitPerMinute / 60 + flushes * 4, // a node's update each; the tree's, the recent insert and two trims
  };
  const perMiss = {
    written: miss("w") + rec.w + rec.after.rowsWrittenPerMiss + recentRow,
    read: miss("r") + rec.r + rec.after.rowsReadPerMiss,
  };
  const rowsWritten = hits * hit("w") + misses * perMiss.written + counters.written;
  const rowsRead = hits * hit("r") + misses * perMiss.read + counters.read;
  // Queries a second on the shards' primaries (every statement one query, a batch's included): lookups, recordings, counters.
  const queriesBefore = hits * hit("d1") + misses * miss("d1");
  const queriesAfter = misses * (rec.d1 + rec.after.d1QueriesPerMiss);
  const primaryLoad = queriesBefore + queriesAfter + counters.statements;
  const shardsForLoad = Math.ceil(primaryLoad / (p.limits.d1QueriesPerSecond * p.limits.targetUtilisation));
  const bytesPerDay = misses * 86_400 * x.nodesPerMiss * (workload.bytesPerNode + workload.overheadPerNode);
  const retainedBytes = bytesPerDay * workload.retentionDays;
  const shardsForStorage = Math.ceil(retainedBytes / (p.limits.dbMaxBytes * p.limits.targetUtilisation));
  const shards = Math.max(shardsForLoad, shardsForStorage);
  // Durable Objects: the tree objects' calls (cold lookups, template second calls, record, learn), the tally adds, the tallies' alarms.
  const treeCalls = hits * hit("do") + misses * (miss("do") + rec.do);
  const tallyAdds = hits * a.hitTallyCallsPerHit;
  const doRequests = treeCalls + tallyAdds + flushes;
  // Duration: the calls' wall time, and each active tree's HitTally held in memory while counts wait for its write.
  const tallyHeld = c.activeTreesPerMinute * (c.heldSecondsPerMinute / 60);
  const doGBs = ((treeCalls * a.doWallMs.treeCall + (tallyAdds + flushes) * a.doWallMs.tallyAdd) / 1000 + tallyHeld) * p.prices.doMemoryGB;
  const doStorageWritten = flushes; // each tally write arms its next alarm: one setAlarm, one row written
  const aePoints = rps * a.analyticsPointsPerRequest;
  const perTreeMissCap = Math.min(p.limits.doRequestsPerSecond / Math.max(1, miss("do") + 1), 1000 / a.recordRoundTripMs);
  const pr = p.prices;
  const month = (perSecond: number) => perSecond * MONTH_S;
  const cost = {
    workers:
      pr.workersBasePerMonth +
      over(month(rps), pr.workersRequestsIncluded, pr.workersPerMillionRequests) +
      over(month(rps) * a.cpuMsPerRequest, pr.workersCpuMsIncluded, pr.workersPerMillionCpuMs),
    d1RowsRead: over(month(rowsRead), pr.d1RowsReadIncluded, pr.d1PerMillionRowsRead),
    d1RowsWritten: over(month(rowsWritten), pr.d1RowsWrittenIncluded, pr.d1PerMillionRowsWritten),
    d1Storage: Math.max(0, retainedBytes / 1e9 - pr.d1StorageIncludedGB) * pr.d1PerGBMonth,
    doRequests: over(month(doRequests), pr.doRequestsIncluded, pr.doPerMillionRequests),
    doDuration: over(month(doGBs), pr.doDurationGBsIncluded, pr.doPerMillionGBs),
    doStorage: over(month(doStorageWritten), pr.doStorageRowsWrittenIncluded, pr.doStoragePerMillionRowsWritten),
    analyticsEngine: over(month(aePoints), pr.aePointsIncluded, pr.aePerMillionPoints),
    cacheApi: 0,
  };
  const total = Object.values(cost).reduce((s, v) => s + v, 0);
  // The walls: the request rate (at this hit rate and retention) at which each limit is reached.
  const bytesPerDayPerRps = bytesPerDay / rps;
  const walls = [
    { limit: `D1 storage per account (${p.limits.accountMaxBytes / 1e9} GB)`, rps: p.limits.accountMaxBytes / (bytesPerDayPerRps * workload.retentionDays) },
    {
      limit: `D1 databases per account (${p.limits.d1DatabasesPerAccount.toLocaleString("en-US")}), storage at ${p.limits.targetUtilisation * 100}% of 10 GB each`,
      rps: (p.limits.d1DatabasesPerAccount * p.limits.dbMaxBytes * p.limits.targetUtilisation) / (bytesPerDayPerRps * workload.retentionDays),
    },
    {
      limit: `one tree's writer object (${p.limits.doRequestsPerSecond.toLocaleString("en-US")} req/s): that tree's own rate`,
      rps: perTreeMissCap / (1 - workload.hitRate),
    },
  ].sort((u, v) => u.rps - v.rps);
  return {
    hits,
    misses,
    hit,
    miss,
    perMiss,
    counters,
    rowsRead,
    rowsWritten,
    queriesBefore,
    queriesAfter,
    primaryLoad,
    shardsForLoad,
    bytesPerDay,
    retainedBytes,
    shardsForStorage,
    shards,
    treeCalls,
    tallyAdds,
    doRequests,
    doGBs,
    doStorageWritten,
    aePoints,
    perTreeMissCap,
    hotTreeMaxRps: perTreeMissCap / (1 - workload.hitRate),
    walls,
    cost,
    total,
  };
}

/** Independent re-computation of the headline numbers: the arithmetic check. */
export function check(p: Platform, m: ReturnType<typeof model>): string[] {
  const fails: string[] = [];
  const w = p.workload;
  if (Math.abs(m.hits + m.misses - w.requestsPerSecond) > 1e-6) fails.push("hits + misses");
  if (m.shardsForStorage * p.limits.dbMaxBytes * p.limits.targetUtilisation < m.retainedBytes) fails.push("storage shards too few");
  if ((m.shardsForStorage - 1) * p.limits.dbMaxBytes * p.limits.targetUtilisation >= m.retainedBytes) fails.push("storage shards not minimal");
  if (m.shardsForLoad * p.limits.d1QueriesPerSecond * p.limits.targetUtilisation < m.primaryLoad) fails.push("load shards too few");
  if (Math.abs(Object.values(m.cost).reduce((x, y) => x + y, 0) - m.total) > 1e-6) fails.push("cost total");
  const written = ((m.rowsWritten * MONTH_S - p.prices.d1RowsWrittenIncluded) / 1e6) * p.prices.d1PerMillionRowsWritten;
  if (Math.abs(written - m.cost.d1RowsWritten) > 1e-6) fails.push("D1 rows written cost");
  if (m.rowsWritten < m.misses * m.perMiss.written) fails.push("rows written below the misses' own");
  return fails;
}
