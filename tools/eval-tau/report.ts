import type { Mode, Tally } from "./runs";

/** One measured cell: a workload under one renaming (ids, or ids and names) and one mode. */
export interface Row {
  workload: string;
  names: boolean;
  mode: Mode;
  tally: Tally;
}

const pct = (n: number, d: number) => (d === 0 ? "-" : `${((100 * n) / d).toFixed(1)}%`);

/** The markdown table of docs/templates.md ("Real traffic with new data"). */
export function table(rows: readonly Row[]): string {
  const out = [
    "| workload | renamed | mode | lines | requests | served | exact / declared / learned | served, last run | wrong | another trial's answer |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
  ];
  for (const { workload, names, mode, tally: t } of rows) {
    const served = t.served.exact + t.served.declared + t.served.learned;
    out.push(
      `| ${workload} | ${names ? "ids + names" : "ids"} | ${mode} | ${t.lines}${t.unrenamed ? ` (+${t.unrenamed} with no id)` : ""} | ${t.requests} | ${pct(served, t.requests)} | ${t.served.exact} / ${t.served.declared} / ${t.served.learned} | ${pct(t.last.served, t.last.requests)} | ${t.wrong} | ${t.otherTrial} |`,
    );
  }
  return out.join("\n");
}

/** The most frequent miss reasons per row (the `muscle-mem-template-miss` header, values folded), as share of the row's misses. */
export function missReasons(rows: readonly Row[], top = 4): string {
  const out: string[] = [];
  for (const { workload, names, mode, tally: t } of rows) {
    const misses = [...t.missReasons.values()].reduce((a, b) => a + b, 0);
    const reasons = [...t.missReasons].sort((a, b) => b[1] - a[1]).slice(0, top);
    out.push(`- ${workload}, ${names ? "ids + names" : "ids"}, ${mode}: ${misses} misses; ${reasons.map(([r, n]) => `${pct(n, misses)} ${r}`).join("; ")}`);
  }
  return out.join("\n");
}

/** The wrong replays, one a line (what was served and what the renamed recording says). */
export function mismatches(rows: readonly Row[], limit = 20): string {
  const all = rows.flatMap((r) =>
    r.tally.mismatches.map((m) => `${r.workload} ${r.mode} ${m.trajectory} (${m.by}): served ${m.served} but the recording says ${m.truth}`),
  );
  return all.length === 0 ? "Wrong replays: 0" : `Wrong replays (${all.length}):\n${all.slice(0, limit).join("\n")}`;
}
