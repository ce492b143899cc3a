/**
 * `npm run eval:tau`: templates on real agent traffic with new data. Each recorded tau-bench / tau2
 * conversation is renamed N times (tools/eval-tau/rename.ts: every opaque id, and with names the
 * customer's names, replaced by fresh values of the same shape, consistently), and the renamed runs go
 * through the simulated Worker (the pure exact → declared → learned → model flow of
 * tools/eval-workflows/simulate.ts), learned mode and declared mode (the client declares the renamed
 * values in muscle-mem-bindings). The first renaming records; the later ones count served and wrong
 * (a served answer that is not the renamed recording's, canonical messages, ids aside).
 *
 * Options: --workloads DIR (default test/fixtures/workloads; ../shared/workloads for the full set),
 * --renames N (default 5), --seed N (default 42), --names (also rename first and last names; --both runs
 * ids alone and then ids + names), --only FILE (tau_bench.jsonl or tau2_bench.jsonl), --limit N (lines per file).
 * Exits 1 on a wrong replay.
 */
import { parseArgs } from "node:util";
import { evaluate, type Mode } from "../tools/eval-tau/runs";
import { missReasons, mismatches, table, type Row } from "../tools/eval-tau/report";
import { readWorkload, SHIPPED_WORKLOADS } from "../tools/workloads";

const { values } = parseArgs({
  options: {
    workloads: { type: "string", default: SHIPPED_WORKLOADS },
    renames: { type: "string", default: "5" },
    seed: { type: "string", default: "42" },
    names: { type: "boolean", default: false },
    both: { type: "boolean", default: false },
    only: { type: "string", default: "" },
    limit: { type: "string", default: "" },
  },
});
const renames = Number(values.renames);
const seed = Number(values.seed);
if (!Number.isInteger(renames) || renames < 2) throw new Error("--renames must be an integer of at least 2 (the first renaming records)");
const files = values.only ? [values.only] : ["tau_bench.jsonl", "tau2_bench.jsonl"];
const limit = values.limit ? Number(values.limit) : Infinity;
const variants = values.both ? [false, true] : [values.names];

const rows: Row[] = [];
for (const names of variants) {
  for (const file of files) {
    const lines = readWorkload(file, limit, values.workloads);
    for (const mode of ["learned", "declared"] as Mode[]) {
      const started = Date.now();
      const tallies = await evaluate(lines, { renames, seed, names, mode });
      for (const [workload, tally] of [...tallies].sort(([a], [b]) => (a < b ? -1 : 1))) rows.push({ workload, names, mode, tally });
      console.error(`${file} ${names ? "ids + names" : "ids"} ${mode}: ${((Date.now() - started) / 1000).toFixed(0)} s`);
    }
  }
}
console.log(
  `\nTemplates on renamed tau-bench / tau2 runs (${values.workloads}): ${renames} renamings per line, seed ${seed}; the first records, the other ${renames - 1} count. TEMPLATE_MIN_BINDINGS=3, DECLARED_MIN_BINDINGS=2.\n`,
);
console.log(table(rows));
console.log("\nWhy the counted requests missed (most frequent reasons):\n");
console.log(missReasons(rows));
console.log(`\n${mismatches(rows)}`);
process.exitCode = rows.some((r) => r.tally.wrong > 0) ? 1 : 0;
