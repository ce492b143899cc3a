import { replayPass, replayScript, type PassResult } from "../tools/replay";
import { startScriptedModel } from "../tools/scripted-model";
import { readWorkload, requestsOf } from "../tools/workloads";
import { startSnapshotDev } from "./snapshot";

export interface BenchReplay {
  trajectories: number;
  requests: number;
  pass1: PassResult;
  pass2: PassResult;
  upstreamGenerationsPass2: number;
  storedBytes: number;
  requestBytes: number;
  nodes: number;
}

/** Row payload bytes, the same measure as tools/replay-run.ts (text lengths plus 8 bytes per integer column). */
const STORED_BYTES_SQL =
  "SELECT (SELECT COALESCE(SUM(length(hash) + length(parent) + length(tree_id) + length(role) + length(message) + COALESCE(length(finish_reason), 0) + 8 * 8), 0) FROM nodes) + (SELECT COALESCE(SUM(length(id) + length(tenant) + length(namespace) + length(model) + length(frame) + 8 * 9), 0) FROM trees) AS bytes, (SELECT COUNT(*) FROM nodes) AS nodes";

/** The workload replay of tools/replay-run.ts, on the benchmark's Worker snapshot. */
export async function benchReplay(snapshot: { dir: string; config: string }, limitPerFile: number): Promise<BenchReplay> {
  const lines = ["tau_bench.jsonl", "tau2_bench.jsonl"].flatMap((f) => readWorkload(f, limitPerFile));
  const requests = requestsOf(lines);
  const model = await startScriptedModel({ script: replayScript(requests), chunkChars: 64 });
  const dev = await startSnapshotDev(snapshot, { UPSTREAM_BASE_URL: model.url });
  try {
    const opts = { key: "sk-replay", namespace: "replay", concurrency: 8 };
    const pass1 = await replayPass(dev.url, requests, opts);
    await new Promise((r) => setTimeout(r, 1500));
    const before = model.generations();
    const pass2 = await replayPass(dev.url, requests, opts);
    const [row] = await dev.sql(STORED_BYTES_SQL);
    return {
      trajectories: lines.length,
      requests: requests.length,
      pass1,
      pass2,
      upstreamGenerationsPass2: model.generations() - before,
      storedBytes: Number(row.bytes),
      requestBytes: pass1.requestBytes,
      nodes: Number(row.nodes),
    };
  } finally {
    await dev.stop();
    await model.close();
  }
}
