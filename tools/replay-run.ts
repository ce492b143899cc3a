import { replayPass, replayScript, type PassResult } from "./replay";
import { startScriptedModel } from "./scripted-model";
import { measureStorage } from "./storage";
import { readWorkload, requestsOf, workloadsDir } from "./workloads";
import { startWranglerDev, type WranglerDev } from "../test/support/wrangler-dev";

export interface ReplayReport {
  trajectories: number;
  requests: number;
  pass1: PassResult;
  pass2: PassResult;
  upstreamGenerationsPass2: number;
  /** Row payload bytes (tools/storage.ts). */
  storedBytes: number;
  /** The local SQLite file, indexes included (null when not found). */
  fileBytes: number | null;
  requestBytes: number;
  nodes: number;
}

/** Starts a Worker whose upstream is `upstreamUrl` (wrangler dev on the checkout, or a bench snapshot). */
export type DevStarter = (vars: Record<string, string>) => Promise<WranglerDev>;

/**
 * Replays workload trajectories through a running Worker: pass 1 records
 * every distinct request (the upstream answers with the recorded message),
 * pass 2 must be served entirely from the tree, exactly as pass 1 was.
 */
export async function runReplay(
  files: string[],
  limitPerFile = Infinity,
  concurrency = 8,
  start: DevStarter = (vars) => startWranglerDev({ vars }),
  induction = false,
  dir = workloadsDir(),
): Promise<ReplayReport> {
  const lines = files.flatMap((f) => readWorkload(f, limitPerFile, dir));
  const requests = requestsOf(lines);
  const model = await startScriptedModel({ script: replayScript(requests), chunkChars: 64 });
  // By default an exact replay: learned templates stay out of it, so pass 2 is the exact tree's alone.
  const dev = await start({ UPSTREAM_BASE_URL: model.url, ...(induction ? {} : { TEMPLATE_INDUCTION: "off" }) });
  try {
    const opts = { key: "sk-replay", namespace: "replay", concurrency };
    const pass1 = await replayPass(dev.url, requests, opts);
    await new Promise((r) => setTimeout(r, 1500));
    const before = model.generations();
    const pass2 = await replayPass(dev.url, requests, { ...opts, expected: pass1.served, reference: pass1 });
    const storage = await measureStorage(dev.sql, dev.stateDir);
    return {
      trajectories: lines.length,
      requests: requests.length,
      pass1,
      pass2,
      upstreamGenerationsPass2: model.generations() - before,
      storedBytes: storage.rowBytes,
      fileBytes: storage.fileBytes,
      requestBytes: pass1.requestBytes,
      nodes: storage.nodes,
    };
  } finally {
    await dev.stop();
    await model.close();
  }
}

/** The report as a Markdown table. */
export function replayTable(r: ReplayReport): string {
  const pct = (n: number, d: number) => `${((100 * n) / Math.max(1, d)).toFixed(2)}%`;
  const file = r.fileBytes === null ? "n/a" : `${(r.fileBytes / 1e6).toFixed(2)} MB = ${pct(r.fileBytes, r.requestBytes)}`;
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
    `| pass 2 answers that differ from the recorded message, field by field (ids aside) | ${r.pass2.fidelity.mismatches}${r.pass2.fidelity.examples.length ? ` (${r.pass2.fidelity.examples.join("; ")})` : ""} |`,
    `| pass 2 upstream generations | ${r.upstreamGenerationsPass2} |`,
    `| pass 1 wall time | ${(r.pass1.wallMs / 1000).toFixed(1)} s |`,
    `| pass 2 wall time | ${(r.pass2.wallMs / 1000).toFixed(1)} s (${(r.pass2.wallMs / r.pass1.wallMs).toFixed(2)}x pass 1) |`,
    `| nodes stored | ${r.nodes} |`,
    `| stored row payload / sum of request bodies | ${(r.storedBytes / 1e6).toFixed(2)} MB / ${(r.requestBytes / 1e6).toFixed(1)} MB = ${pct(r.storedBytes, r.requestBytes)} |`,
    `| SQLite file, indexes included / sum of request bodies | ${file} |`,
  ].join("\n");
}
