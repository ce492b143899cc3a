/**
 * `npm run replay [-- --limit N] [-- --files tau_bench.jsonl,tau2_bench.jsonl] [-- --induction] [-- --workloads DIR]`:
 * replays the workloads through wrangler dev twice and prints the table. DIR defaults to ../shared/workloads
 * when it exists (the full set), else the subset shipped in test/fixtures/workloads (tools/workloads.ts).
 * `--induction` keeps learned templates on (they are off by default: this is the exact-tree check).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { replayTable, runReplay } from "../tools/replay-run";
import { workloadsDir } from "../tools/workloads";

const { values } = parseArgs({
  options: {
    limit: { type: "string" },
    files: { type: "string" },
    concurrency: { type: "string" },
    induction: { type: "boolean" },
    workloads: { type: "string" },
    help: { type: "boolean", short: "h" },
  },
});
if (values.help) {
  console.log("npm run replay [-- --limit N] [--files tau_bench.jsonl,tau2_bench.jsonl] [--concurrency N] [--induction] [--workloads DIR]");
  process.exit(0);
}
const files = (values.files ?? "tau_bench.jsonl,tau2_bench.jsonl").split(",");
const report = await runReplay(
  files,
  values.limit ? Number(values.limit) : Infinity,
  Number(values.concurrency ?? 8),
  undefined,
  values.induction === true,
  values.workloads ?? workloadsDir(),
);
console.error(`replay: workloads from ${values.workloads ?? workloadsDir()}`);
console.log(replayTable(report));
mkdirSync("bench-output", { recursive: true });
writeFileSync("bench-output/replay.json", JSON.stringify({ date: new Date().toISOString(), files, ...report }, null, 2));
const ok =
  report.pass2.outcomes.hit === report.requests &&
  report.pass2.mismatches === 0 &&
  report.pass2.fidelity.mismatches === 0 &&
  report.upstreamGenerationsPass2 === 0;
if (!ok) {
  console.error(`replay: pass 2 was not served entirely and faithfully from the tree (${report.pass2.fidelity.examples.join("; ")})`);
  process.exit(1);
}
