import { describe, expect, it } from "vitest";
import { STEPS, defaultStep, seriesSql, seriesWindow, shapeSeries, sqlAnswer } from "../../src/observability/series";

const NOW = Date.UTC(2026, 0, 1, 12, 7, 31);
const at = (h: number, m: number) => Date.UTC(2026, 0, 1, h, m) / 1000;

describe("seriesWindow", () => {
  it("Should end with the step that holds now and cover the minutes in whole steps", () => {
    const w = seriesWindow(60, 5, NOW);
    expect(w).toEqual({ stepMinutes: 5, startSec: at(11, 10), endSec: at(12, 10) });
    expect((w.endSec - w.startSec) / 300).toBe(12);
  });

  it("Should round a window that is not a whole number of steps up", () => {
    const w = seriesWindow(7, 5, NOW);
    expect((w.endSec - w.startSec) / 300).toBe(2);
  });

  it("Should align day steps to UTC midnight", () => {
    const w = seriesWindow(10_080, 1440, NOW);
    expect(w.endSec).toBe(Date.UTC(2026, 0, 2) / 1000);
    expect((w.endSec - w.startSec) / 86_400).toBe(7);
  });
});

describe("defaultStep", () => {
  it("Should keep a window within 120 points with the smallest allowed step", () => {
    expect(defaultStep(60)).toBe(1);
    expect(defaultStep(120)).toBe(1);
    expect(defaultStep(121)).toBe(2);
    expect(defaultStep(1440)).toBe(15);
    expect(defaultStep(10_080)).toBe(120);
    expect(STEPS).toContain(defaultStep(777));
  });
});

describe("seriesSql", () => {
  const w = seriesWindow(60, 5, NOW);

  it("Should weight every count and quantile by _sample_interval and bound the window with integers", () => {
    const sql = seriesSql("muscle_mem", w);
    expect(sql).toContain("toStartOfInterval(timestamp, INTERVAL '5' MINUTE)");
    expect(sql).toContain("SUM(IF(blob1 = 'hit', _sample_interval, 0)) AS hits");
    expect(sql).toContain("SUM(IF(blob1 = 'miss', _sample_interval, 0)) AS misses");
    expect(sql).toContain("SUM(IF(blob1 = 'bypass', _sample_interval, 0)) AS bypasses");
    expect(sql).toContain("quantileExactWeighted(0.5)(double1, _sample_interval) AS p50_ms");
    expect(sql).toContain("quantileExactWeighted(0.99)(double1, _sample_interval) AS p99_ms");
    expect(sql).toContain(`FROM muscle_mem\n`);
    expect(sql).toContain(`timestamp >= toDateTime(${w.startSec}) AND timestamp < toDateTime(${w.endSec})`);
    expect(sql).toContain("AND blob1 IN ('hit', 'miss', 'bypass')");
    expect(sql).toMatch(/GROUP BY t\nORDER BY t\nFORMAT JSON$/);
  });

  it("Should refuse a dataset name that is not an identifier, and a window that is not integers", () => {
    for (const bad of ["muscle_mem; DROP", "a b", "x'--", "", "1abc"]) expect(() => seriesSql(bad, w)).toThrow(RangeError);
    expect(() => seriesSql("muscle_mem", { ...w, startSec: 1.5 })).toThrow(RangeError);
    expect(() => seriesSql("muscle_mem", { ...w, stepMinutes: Number.NaN })).toThrow(RangeError);
  });
});

describe("shapeSeries", () => {
  const w = seriesWindow(15, 5, NOW);

  it("Should give one point per step, fill rows in, and zero the steps without rows", () => {
    const answer = sqlAnswer.parse({
      meta: [],
      data: [
        { t: at(12, 0), hits: "7", misses: "2", bypasses: "1", p50_ms: 4.26, p99_ms: 30 },
        { t: String(at(11, 55)), hits: 1, misses: 0, bypasses: 0, p50_ms: 2, p99_ms: 2 },
      ],
      rows: 2,
    });
    expect(shapeSeries(answer, w)).toEqual({
      step_minutes: 5,
      points: [
        { t: "2026-01-01T11:55:00Z", hits: 1, misses: 0, bypasses: 0, p50_ms: 2, p99_ms: 2 },
        { t: "2026-01-01T12:00:00Z", hits: 7, misses: 2, bypasses: 1, p50_ms: 4.3, p99_ms: 30 },
        { t: "2026-01-01T12:05:00Z", hits: 0, misses: 0, bypasses: 0, p50_ms: null, p99_ms: null },
      ],
    });
  });

  it("Should drop rows outside the window and read nan quantiles as null", () => {
    const answer = sqlAnswer.parse({
      data: [
        { t: at(11, 50), hits: "99", misses: "0", bypasses: "0", p50_ms: 1, p99_ms: 1 },
        { t: at(12, 10), hits: "99", misses: "0", bypasses: "0", p50_ms: 1, p99_ms: 1 },
        { t: at(12, 5), hits: "0", misses: "3", bypasses: "0", p50_ms: "nan", p99_ms: null },
      ],
    });
    const points = shapeSeries(answer, w).points;
    expect(points.map((p) => p.hits)).toEqual([0, 0, 0]);
    expect(points[2]).toEqual({ t: "2026-01-01T12:05:00Z", hits: 0, misses: 3, bypasses: 0, p50_ms: null, p99_ms: null });
  });

  it("Should refuse an answer without a data array", () => {
    expect(sqlAnswer.safeParse({ errors: ["x"] }).success).toBe(false);
    expect(sqlAnswer.safeParse({ data: [{ t: 1, hits: {} }] }).success).toBe(false);
  });
});
