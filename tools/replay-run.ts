import { replayPass, replayScript, type PassResult } from "./replay";
import { startScriptedModel } from "./scripted-model";
import { readWorkload, requestsOf } from "./workloads";
import { startWranglerDev } from "../test/support/wrangler-dev";

export interface ReplayReport {
  trajectories: number;
  requests: number;
  pass1: PassResult;
  pass2: PassResult;
  upstreamGenerationsPass2: number;
  storedBytes: number;
  requestBytes: number;
  nodes: number;
}

/**
 * Replays workload trajectories through a real `wrangler dev`: pass 1 records
 * every distinct request (the upstream answers with the recorded message),
 * pass 2 must be served entirely from the tree.
 */
export async function runReplay(files: string[], limitPerFile = Infinity, concurrency = 8): Promise<ReplayReport> {
  const lines = files.flatMap((f) => readWorkload(f, limitPerFile));
  const requests = requestsOf(lines);
  const model = await startScriptedModel({ script: replayScript(requests), chunkChars: 64 });
  const dev = await startWranglerDev({ vars: { UPSTREAM_BASE_URL: model.url } });
  try {
    const opts = { key: "sk-replay", namespace: "replay", concurrency };
    const pass1 = await replayPass(dev.url, requests, opts);
    await new Promise((r) => setTimeout(r, 1500));
    const before = model.generations();
    const pass2 = await replayPass(dev.url, requests, { ...opts, expected: pass1.served });
    const [bytes] = await dev.sql(
      "SELECT (SELECT COALESCE(SUM(length(hash) + length(parent) + length(tree_id) + length(role) + length(message) + COALESCE(length(finish_reason), 0) + 8 * 8), 0) FROM nodes) + (SELECT COALESCE(SUM(length(id) + length(tenant) + length(namespace) + length(model) + length(frame) + 8 * 9), 0) FROM trees) AS bytes, (SELECT COUNT(*) FROM nodes) AS nodes",
    );
    return {
      trajectories: lines.length,
      requests: requests.length,
      pass1,
      pass2,
      upstreamGenerationsPass2: model.generations() - before,
      storedBytes: Number(bytes.bytes),
      requestBytes: pass1.requestBytes,
      nodes: Number(bytes.nodes),
    };
  } finally {
    await dev.stop();
    await model.close();
  }
}

/** The report as a Markdown table. */
export function replayTable(r: ReplayReport): string {
  const pct = (n: number, d: number) => `${((100 * n) / Math.max(1, d)).toFixed(2)}%`;
  return [
    "| measure | value |",
    "| --- | --- |",
    `| trajectories | ${r.trajectories} |`,
    `| distinct model requests | ${r.requests} |`,
    `| pass 1 outcomes | ${JSON.stringify(r.pass1.outcomes)} |`,
    `| pass 2 outcomes | ${JSON.stringify(r.pass2.outcomes)} |`,
    `| pass 1 hits: requests identical up to tool-call ids | ${r.pass1.outcomes.hit ?? 0} (the recorded model answered ${r.pass1.mismatches} of them differently the second time) |`,
    `| pass 2 served from the tree | ${pct(r.pass2.outcomes.hit ?? 0, r.requests)} |`,
    `| pass 2 answers that differ from pass 1, message for message | ${r.pass2.mismatches} |`,
    `| pass 2 upstream generations | ${r.upstreamGenerationsPass2} |`,
    `| pass 1 wall time | ${(r.pass1.wallMs / 1000).toFixed(1)} s |`,
    `| pass 2 wall time | ${(r.pass2.wallMs / 1000).toFixed(1)} s (${(r.pass2.wallMs / r.pass1.wallMs).toFixed(2)}x pass 1) |`,
    `| nodes stored | ${r.nodes} |`,
    `| stored bytes (row payload) / sum of request bodies | ${(r.storedBytes / 1e6).toFixed(2)} MB / ${(r.requestBytes / 1e6).toFixed(1)} MB = ${pct(r.storedBytes, r.requestBytes)} |`,
  ].join("\n");
}
