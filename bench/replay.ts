import { runReplay, type ReplayReport } from "../tools/replay-run";
import { startSnapshotDev } from "./snapshot";

export type BenchReplay = ReplayReport;

/** The workload replay of tools/replay-run.ts, on the benchmark's Worker snapshot. */
export function benchReplay(snapshot: { dir: string; config: string }, limitPerFile: number): Promise<BenchReplay> {
  return runReplay(["tau_bench.jsonl", "tau2_bench.jsonl"], limitPerFile, 8, (vars) => startSnapshotDev(snapshot, vars));
}
