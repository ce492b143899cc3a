/**
 * scripts/shard-load.ts's results: each (variant, N) instance's segments summed up (medians over rounds),
 * printed as the markdown table docs/capacity.md quotes.
 */
import { BINDINGS, type Dev } from "./shard-load-dev";
import { median, type Segment } from "./shard-load-traffic";

export interface Instance {
  variant: string;
  shards: number;
  dev: Dev;
  segments: Segment[];
  trees?: Record<string, number>;
}

/** One row of the table per instance: medians over its rounds, sums of its outcomes and errors. */
export function rowsOf(instances: readonly Instance[]) {
  return instances.map((inst) => {
    const seg = inst.segments;
    const sum = (f: (s: Segment) => number) => seg.reduce((a, s) => a + f(s), 0);
    const med = (f: (s: Segment) => number) => median(seg.map(f));
    const outcomes: Record<string, number> = {};
    for (const s of seg) for (const [k, v] of Object.entries(s.outcomes)) outcomes[k] = (outcomes[k] ?? 0) + v;
    const base = instances.find((i) => i.variant === inst.variant && i.shards === 1);
    const rps = med((s) => s.rps);
    return {
      variant: inst.variant,
      shards: inst.shards,
      rps,
      vs1: base ? rps / median(base.segments.map((s) => s.rps)) : Number.NaN,
      perRound: seg.map((s) => Math.round(s.rps)),
      p50: med((s) => s.p50),
      p99: med((s) => s.p99),
      hitP50: med((s) => s.hitP50),
      missP50: med((s) => s.missP50),
      hitLookupMs: med((s) => s.hitLookupMs),
      outcomes,
      hitShare:
        (outcomes.hit ?? 0) /
        Math.max(
          1,
          sum((s) => s.requests),
        ),
      unexpected: sum((s) => s.unexpected),
      errors: sum((s) => s.errors),
      busyPct: med((s) => s.busyPct),
      cpuPerReq: {
        worker: med((s) => s.cpuPerReq.worker),
        proxy: med((s) => s.cpuPerReq.proxy),
        wrangler: med((s) => s.cpuPerReq.wrangler),
        client: med((s) => s.cpuPerReq.client),
      },
      treesPerShard: inst.trees,
      segments: seg,
    };
  });
}

export type Row = ReturnType<typeof rowsOf>[number];

const TTL_LABEL: Record<string, string> = { default: "1 s (default)", memory: "1 h (memory)", d1: "0 (D1)" };

/** Prints `header` and the table of `rows`. */
export function printTable(header: string, rows: readonly Row[]): void {
  const f = (n: number, d = 1) => n.toFixed(d);
  console.log(`${header}\n`);
  console.log(
    "| hot cache TTL | D1 shards | req/s (median) | vs 1 | per round | p50 / p99 ms | hit / miss p50 ms | hit lookup ms | hit / miss / other | errors | CPU busy | CPU ms/req: Worker / proxy / wrangler / client | trees per shard |",
  );
  console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
  for (const r of rows) {
    const other =
      Object.entries(r.outcomes)
        .filter(([k]) => k !== "hit" && k !== "miss")
        .map(([k, v]) => `${k} ${v}`)
        .join(", ") || "0";
    const trees = r.treesPerShard
      ? BINDINGS.slice(0, r.shards)
          .map((b) => r.treesPerShard?.[b] ?? 0)
          .join("/")
      : "?";
    const cpu = r.cpuPerReq;
    console.log(
      `| ${TTL_LABEL[r.variant]} | ${r.shards} | ${f(r.rps, 0)} | ${f(r.vs1, 2)}x | ${r.perRound.join(", ")} | ${f(r.p50)} / ${f(r.p99)} | ${f(r.hitP50)} / ${f(r.missP50)} | ${f(r.hitLookupMs, 1)} | ${r.outcomes.hit ?? 0} / ${r.outcomes.miss ?? 0} / ${other} (${f(100 * r.hitShare)}% hits) | ${r.errors + r.unexpected} | ${f(r.busyPct, 0)}% | ${f(cpu.worker, 2)} / ${f(cpu.proxy, 2)} / ${f(cpu.wrangler, 2)} / ${f(cpu.client, 2)} | ${trees} |`,
    );
  }
}
