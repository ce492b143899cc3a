import { z } from "zod";

/**
 * Hit, miss and latency series from Workers Analytics Engine (docs/deploy.md
 * "Hit, miss and latency series"): the SQL the Worker sends to the SQL API and
 * the shaping of its rows into evenly spaced points. Pure: no runtime, no I/O.
 */

/** Step sizes in minutes: each divides a day, so buckets align to UTC midnight and the epoch alike. */
export const STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440] as const;
/** Shortest and longest window, in minutes (five minutes to a week). */
export const MIN_MINUTES = 5;
export const MAX_MINUTES = 10_080;
/** At most this many points per answer. */
export const MAX_POINTS = 1440;
/** Without `step`, the smallest step that keeps a window within this many points. */
export const DEFAULT_POINTS = 120;

/** A dataset name as Analytics Engine allows it; anything else is refused before it reaches SQL. */
export const DATASET_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** The window of one series: whole steps, the last one holding `now`. All values are integers. */
export interface SeriesWindow {
  stepMinutes: number;
  /** Unix seconds of the first bucket's start (inclusive). */
  startSec: number;
  /** Unix seconds of the last bucket's end (exclusive). */
  endSec: number;
}

/** One point of the series: requests per outcome (weighted by `_sample_interval`) and total latency. */
export interface SeriesPoint {
  /** The bucket's start, ISO 8601 UTC. */
  t: string;
  hits: number;
  misses: number;
  bypasses: number;
  /** Median total ms of the bucket's requests; null when it had none. */
  p50_ms: number | null;
  p99_ms: number | null;
}

/** The answer of `GET /api/series`. */
export interface Series {
  step_minutes: number;
  points: SeriesPoint[];
}

/** The smallest allowed step that shows `minutes` in at most DEFAULT_POINTS points. */
export function defaultStep(minutes: number): number {
  return STEPS.find((s) => minutes / s <= DEFAULT_POINTS) ?? STEPS[STEPS.length - 1];
}

/**
 * The window that ends with the step holding `nowMs` and covers at least `minutes`.
 *
 * @example seriesWindow(60, 5, Date.UTC(2026, 0, 1, 12, 7)) // 12 buckets, 11:10 to 12:10
 */
export function seriesWindow(minutes: number, stepMinutes: number, nowMs: number): SeriesWindow {
  const stepSec = stepMinutes * 60;
  const endSec = (Math.floor(nowMs / 1000 / stepSec) + 1) * stepSec;
  const buckets = Math.ceil(minutes / stepMinutes);
  return { stepMinutes, startSec: endSec - buckets * stepSec, endSec };
}

/** Integer-only guard: everything interpolated into the SQL passes through here. */
function int(value: number): string {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`not a non-negative integer: ${value}`);
  return String(value);
}

/**
 * The SQL API query for one window: per bucket, requests per outcome weighted
 * by `_sample_interval`, and the weighted p50 and p99 of the total ms
 * (`double1`). Only cache outcomes count (`blob1` hit, miss, bypass): API
 * calls and 4xx (`none`) are left out. Interpolates only integers and a
 * dataset name checked against DATASET_NAME.
 */
export function seriesSql(dataset: string, window: SeriesWindow): string {
  if (!DATASET_NAME.test(dataset)) throw new RangeError("invalid dataset name");
  const step = int(window.stepMinutes);
  return [
    `SELECT toUnixTimestamp(toStartOfInterval(timestamp, INTERVAL '${step}' MINUTE)) AS t,`,
    `  SUM(IF(blob1 = 'hit', _sample_interval, 0)) AS hits,`,
    `  SUM(IF(blob1 = 'miss', _sample_interval, 0)) AS misses,`,
    `  SUM(IF(blob1 = 'bypass', _sample_interval, 0)) AS bypasses,`,
    `  quantileExactWeighted(0.5)(double1, _sample_interval) AS p50_ms,`,
    `  quantileExactWeighted(0.99)(double1, _sample_interval) AS p99_ms`,
    `FROM ${dataset}`,
    `WHERE timestamp >= toDateTime(${int(window.startSec)}) AND timestamp < toDateTime(${int(window.endSec)})`,
    `  AND blob1 IN ('hit', 'miss', 'bypass')`,
    `GROUP BY t`,
    `ORDER BY t`,
    `FORMAT JSON`,
  ].join("\n");
}

/** A number as the SQL API prints it: 64-bit integers come quoted, quantiles of nothing as nan. */
const sqlNumber = z.union([z.number(), z.string(), z.null()]).transform((v) => {
  const n = typeof v === "string" ? Number(v) : v;
  return n === null || !Number.isFinite(n) ? null : n;
});

const sqlRow = z.object({
  t: sqlNumber,
  hits: sqlNumber,
  misses: sqlNumber,
  bypasses: sqlNumber,
  p50_ms: sqlNumber,
  p99_ms: sqlNumber,
});

/** The SQL API's JSON answer (`FORMAT JSON`): `{meta, data, rows}`; only `data` is read. */
export const sqlAnswer = z.object({ data: z.array(sqlRow) });

export type SqlAnswer = z.infer<typeof sqlAnswer>;

const round = (n: number | null, digits = 1): number | null => (n === null ? null : Number(n.toFixed(digits)));

/**
 * One point per step of the window, in order: rows fill their bucket, steps
 * without a row are zero with null latency. Rows outside the window are
 * dropped; two rows of one bucket add up (their latencies: the busier row's).
 */
export function shapeSeries(answer: SqlAnswer, window: SeriesWindow): Series {
  const stepSec = window.stepMinutes * 60;
  const count = (window.endSec - window.startSec) / stepSec;
  const points: SeriesPoint[] = Array.from({ length: count }, (_, i) => ({
    t: new Date((window.startSec + i * stepSec) * 1000).toISOString().replace(".000Z", "Z"),
    hits: 0,
    misses: 0,
    bypasses: 0,
    p50_ms: null,
    p99_ms: null,
  }));
  const weight = new Array<number>(count).fill(0);
  for (const row of answer.data) {
    if (row.t === null || row.t < window.startSec || row.t >= window.endSec) continue;
    const i = Math.floor((row.t - window.startSec) / stepSec);
    const p = points[i];
    const hits = Math.max(0, row.hits ?? 0);
    const misses = Math.max(0, row.misses ?? 0);
    const bypasses = Math.max(0, row.bypasses ?? 0);
    p.hits += hits;
    p.misses += misses;
    p.bypasses += bypasses;
    const requests = hits + misses + bypasses;
    if (requests > weight[i]) {
      weight[i] = requests;
      p.p50_ms = round(row.p50_ms);
      p.p99_ms = round(row.p99_ms);
    }
  }
  return { step_minutes: window.stepMinutes, points };
}
