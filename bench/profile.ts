/**
 * A CPU profile of the Worker under a hit or miss load, over the DevTools
 * protocol of `wrangler dev`'s inspector: `npm run bench:profile -- hit`
 * (or `miss`, `static`). Writes the profile to bench/profile-<load>.cpuprofile
 * (open it in Chrome DevTools) and prints the functions with the most self
 * time, and the share of the samples that were idle.
 */
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { freePort, startWranglerDev } from "../test/support/wrangler-dev";
import { startScriptedModel } from "../tools/scripted-model";
import { hotSet } from "./floors";
import { chatSpec, FLOOR, log, prime } from "./http";
import { runSegment, type LoadSpec } from "./load";
import { uniqueMiss } from "./bodies";
import { varsOf } from "./proc-cpu";
import { devtools } from "./profile-classes";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const load = (process.argv[2] ?? "hit") as "hit" | "miss" | "static";
const SECONDS = Number(process.argv[3] ?? 8);
const CONNECTIONS = 10;

/** Self time by function (ms, share of all samples), the top `count`. */
function selfTimes(profile: Profile, count: number): Array<{ fn: string; ms: number; share: number }> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const totals = new Map<string, number>();
  let all = 0;
  profile.samples.forEach((id, i) => {
    const node = byId.get(id);
    // timeDeltas[i] is the time from sample i-1 to sample i: sample i lasts until the next one.
    const dt = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    all += dt;
    if (!node) return;
    const f = node.callFrame;
    const file = f.url.split("/").slice(-2).join("/");
    const name = `${f.functionName || "(anonymous)"} ${file}:${f.lineNumber + 1}`;
    totals.set(name, (totals.get(name) ?? 0) + dt);
  });
  return [...totals]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([fn, ms]) => ({ fn, ms: Math.round(ms), share: Number((ms / all).toFixed(3)) }));
}

/** `MM_HOT=240`: the hit load's distinct bodies (40 by default). `MM_VARS=HOT_CACHE_TTL_MS=60000,...`: more vars for the Worker. */
const bodies = hotSet(Number(process.env.MM_HOT ?? 40));
const extraVars = varsOf(process.env.MM_VARS);
const model = await startScriptedModel({ script: () => ({ role: "assistant", content: "Let me check that reservation for you." }) });
const inspectorPort = await freePort();
const dev = await startWranglerDev({
  vars: { UPSTREAM_BASE_URL: model.url, ...extraVars, ...(process.env.MM_LOG_LEVEL ? { LOG_LEVEL: process.env.MM_LOG_LEVEL } : {}) },
  logLevel: "error",
  inspectorPort,
});
try {
  // Misses: the warm-up and the profiled run each send bodies of their own (a replayed body would be a hit).
  const misses = (run: string) =>
    chatSpec(
      "miss",
      Array.from({ length: 5000 }, (_, i) => uniqueMiss(bodies[i % bodies.length], `profile-${run}-${Date.now()}-${i}`)),
    );
  let spec: LoadSpec = FLOOR;
  if (load === "hit") {
    await prime(dev.url, bodies);
    spec = chatSpec("hit", bodies);
  }
  await runSegment(dev.url, load === "miss" ? misses("warm-up") : spec, 2, CONNECTIONS);
  if (load === "miss") spec = misses("profiled");
  const { send } = await devtools(inspectorPort);
  await send("Profiler.enable");
  await send("Profiler.setSamplingInterval", { interval: 100 });
  await send("Profiler.start");
  const segment = await runSegment(dev.url, spec, SECONDS, CONNECTIONS);
  const { profile } = (await send("Profiler.stop")) as unknown as { profile: Profile };
  const out = resolve(import.meta.dirname, `profile-${load}.cpuprofile`);
  writeFileSync(out, JSON.stringify(profile));
  log(`${load}: ${segment.requests} requests, ${segment.rps.toFixed(0)} req/s, p50 ${segment.p50.toFixed(2)} ms, outcomes ${JSON.stringify(segment.outcomes)}`);
  log(`profile: ${out}`);
  console.table(selfTimes(profile, 40));
} finally {
  await dev.stop();
  await model.close();
}
