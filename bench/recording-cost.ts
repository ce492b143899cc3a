import { startWranglerDev } from "../test/support/wrangler-dev";
import { uniqueMiss, type Body } from "./bodies";
import { HEADERS, post, prime } from "./http";

/** What one tree object's call did to D1, from its `store_work` line (src/observability/store-meter.ts loggedStoreWork). */
interface StoreWork {
  object: string;
  call: string;
  d1_queries: number;
}

/** Per miss: the calls a recording makes to the tree's objects after the response, and their D1 queries, by call. */
export interface RecordingCost {
  misses: number;
  /** `record` (the writer) and `learn` (the learner, with TEMPLATE_INDUCTION on) calls per miss. */
  doCallsPerMiss: number;
  /** D1 queries (statements; a batch counts each of its statements) the objects made per miss. */
  d1QueriesPerMiss: number;
  byCall: Record<string, { calls: number; d1QueriesPerCall: number }>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The `store_work` lines in wrangler's output (one JSON object per line, maybe after a prefix). */
export function storeWorkLines(output: string): StoreWork[] {
  const out: StoreWork[] = [];
  for (const line of output.split("\n")) {
    const start = line.indexOf('{"event":"store_work"');
    if (start < 0) continue;
    try {
      const e = JSON.parse(line.slice(start)) as StoreWork;
      if (typeof e.d1_queries === "number") out.push(e);
    } catch {
      // A line cut by the terminal: not counted.
    }
  }
  return out;
}

/**
 * The work a recording causes after the response, which no `server-timing`
 * shows: a Worker of its own (the same snapshot, fresh local D1) at
 * LOG_LEVEL debug, where the tree objects log each `record` and `learn` call
 * with the D1 queries it made. Records `misses` conversations of `bases`, then
 * sends one new turn of each, one at a time
 * (each a recorded miss), waits until every one is served from the tree and
 * the learners are done, then sums the lines (rows inserted per miss: bench/floors.ts). A run of its own, so that the
 * debug logging never slows the measured rows.
 */
export async function recordingCost(snapshot: { config: string }, upstreamUrl: string, bases: Body[], misses = 30): Promise<RecordingCost> {
  const dev = await startWranglerDev({ config: snapshot.config, vars: { UPSTREAM_BASE_URL: upstreamUrl, LOG_LEVEL: "debug" }, logLevel: "log" });
  try {
    const tag = `recording ${Date.now()}`;
    // The conversations so far are recorded first, as in the floors' misses: a miss then records its new turn only.
    const recordedBases = bases.slice(0, misses);
    await prime(dev.url, recordedBases);
    await sleep(2000); // the priming's learners finish: only the misses' lines are counted
    const mark = dev.output().length;
    const bodies = Array.from({ length: misses }, (_, i) => uniqueMiss(recordedBases[i % recordedBases.length], `${tag} ${i}`));
    for (const body of bodies) {
      const res = await post(dev.url, body, HEADERS);
      await res.arrayBuffer();
      if (res.headers.get("muscle-mem-cache") !== "miss") throw new Error(`recording cost: a new request was a ${res.headers.get("muscle-mem-cache")}`);
      await sleep(100);
    }
    for (const body of bodies) {
      for (let tries = 0; ; tries++) {
        const res = await post(dev.url, body, { ...HEADERS, "cache-control": "only-if-cached" });
        await res.arrayBuffer();
        if (res.status === 200) break;
        if (tries > 100) throw new Error("recording cost: a miss was never recorded");
        await sleep(50);
      }
    }
    await sleep(2000); // the learners finish
    const work = storeWorkLines(dev.output().slice(mark));
    const byCall: RecordingCost["byCall"] = {};
    for (const w of work) {
      const name = `${w.object}.${w.call}`;
      const c = (byCall[name] ??= { calls: 0, d1QueriesPerCall: 0 });
      c.calls++;
      c.d1QueriesPerCall += w.d1_queries;
    }
    for (const c of Object.values(byCall)) c.d1QueriesPerCall /= c.calls;
    if (!byCall["writer.record"] || byCall["writer.record"].calls < misses)
      throw new Error(`recording cost: ${byCall["writer.record"]?.calls ?? 0} record lines for ${misses} misses (is LOG_LEVEL debug reaching the objects?)`);
    return {
      misses,
      doCallsPerMiss: work.length / misses,
      d1QueriesPerMiss: work.reduce((a, w) => a + w.d1_queries, 0) / misses,
      byCall,
    };
  } finally {
    await dev.stop();
  }
}
