import type { Measure } from "./load";

/** One row of the benchmark table. */
export interface Row {
  row: string;
  target: string;
  value: string;
  met: boolean | null;
  /** The measurements the value comes from: "name: p50 / p99 / req/s". */
  detail: string;
}

const ms = (n: number) => `${n.toFixed(2)} ms`;

/** "p50 / p99 / req/s" of a measure. */
export function numbers(m: Measure): string {
  return `${ms(m.p50)} / ${ms(m.p99)} / ${Math.round(m.rps)} req/s`;
}

/** "name: p50 / p99 / req/s" of a measure. */
export function triple(name: string, m: Measure): string {
  return `${name}: ${numbers(m)}`;
}

export function markdown(rows: Row[]): string {
  const verdict = (met: boolean | null) => (met === null ? "report" : met ? "met" : "**missed**");
  return [
    "| row | target | measured | verdict | p50 / p99 / req/s |",
    "| --- | --- | --- | --- | --- |",
    ...rows.map((r) => `| ${r.row} | ${r.target} | ${r.value} | ${verdict(r.met)} | ${r.detail} |`),
  ].join("\n");
}
