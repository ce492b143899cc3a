/**
 * Hit throughput of two builds or two configurations side by side, for
 * before/after work on the hit path:
 *
 *   npx tsx bench/hit-ab.ts [seconds=6] [rounds=3] [bodies=240] [connections=10]
 *   MM_VARS_A=COLO_CACHE_TTL_MS=60000,HOT_CACHE_TTL_MS=60000 npx tsx bench/hit-ab.ts
 *   MM_ROOT_A=/tmp/base npx tsx bench/hit-ab.ts      # A bundled from another worktree (e.g. `git worktree add /tmp/base HEAD~1`)
 *
 * Each side is a snapshot under its own `wrangler dev`, primed with the same
 * recorded tau-bench bodies. The sides alternate (A B, then B A, …); each
 * measured segment follows 2 s of unmeasured load on the same side, so that
 * the bodies it serves are warm again after the other side's turn. Prints
 * each segment's req/s, the store calls from `server-timing`, and the CPU
 * per request of each side's process tree (workerd, and wrangler's node),
 * then the medians and B/A.
 */
import { startScriptedModel } from "../tools/scripted-model";
import { hotSet } from "./floors";
import { allHits, chatSpec, log, prime } from "./http";
import { runSegment, summarise, type Segment } from "./load";
import { cpuOf, cpuPerRequest, varsOf } from "./proc-cpu";
import { snapshotWorker, startSnapshotDev } from "./snapshot";

const [seconds, rounds, count, connections] = [6, 3, 240, 10].map((d, i) => Number(process.argv[2 + i] ?? d));
const WARM_SECONDS = 2;
const bodies = hotSet(count);
const spec = chatSpec("hit", bodies);
const model = await startScriptedModel({ script: () => ({ role: "assistant", content: "Let me check that reservation for you." }) });
const sides = await Promise.all(
  (["A", "B"] as const).map(async (name) => {
    const snapshot = await snapshotWorker(undefined, process.env[`MM_ROOT_${name}`] || undefined);
    const vars = { UPSTREAM_BASE_URL: model.url, ...varsOf(process.env[`MM_VARS_${name}`]) };
    return { name, snapshot, vars, dev: await startSnapshotDev(snapshot, vars), segments: [] as Segment[] };
  }),
);
try {
  for (const side of sides) {
    log(`${side.name}: ${side.snapshot.dir} ${JSON.stringify(side.vars)}; priming ${bodies.length} bodies`);
    await prime(side.dev.url, bodies);
  }
  for (let round = 0; round < rounds; round++) {
    for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
      await runSegment(side.dev.url, spec, WARM_SECONDS, connections);
      const before = cpuOf(side.dev.pid);
      const segment = await runSegment(side.dev.url, spec, seconds, connections);
      allHits(side.name, { segments: [segment] });
      side.segments.push(segment);
      const s = segment.store;
      log(
        `round ${round + 1} ${side.name}: ${segment.rps.toFixed(0)} req/s, p50 ${segment.p50.toFixed(2)} ms | D1 ${s.d1Queries}, DO ${s.doCalls}, colo ${s.colo.hit}/${s.colo.miss} | CPU ms per request: ${cpuPerRequest(before, cpuOf(side.dev.pid), segment.requests)}`,
      );
    }
  }
  const [a, b] = sides.map((s) => summarise(s.segments));
  log(`median req/s: A ${a.rps.toFixed(0)}, B ${b.rps.toFixed(0)}, B/A ${(b.rps / a.rps).toFixed(3)}; p50 A ${a.p50.toFixed(2)} ms, B ${b.p50.toFixed(2)} ms`);
} finally {
  for (const side of sides) {
    await side.dev.stop();
    side.snapshot.remove();
  }
  await model.close();
}
