import { startWranglerDev } from "../test/support/wrangler-dev";
import { uniqueMiss, type Body } from "./bodies";
import { HEADERS, post, prime } from "./http";

/**
 * What one call did to D1 (and to other objects), from its `store_work` line (src/observability/store-meter.ts):
 * a tree object's call (`writer.record`, `learner.learn_soon`, the learner's alarm `learner.learn_batch`), a HitTally write (`tally.flush`), or D1 work a
 * request did after its response (`worker.after_response`: a miss's explanation, a key's renewal, the record call).
 */
interface StoreWork {
  object: string;
  call: string;
  request_id?: string;
  d1_queries: number;
  d1_rows_read?: number;
  d1_rows_written?: number;
  do_calls?: number;
}

type CallCost = { calls: number; d1QueriesPerCall: number; rowsReadPerCall: number; rowsWrittenPerCall: number };

/** Per miss: the calls a recording makes to the tree's objects after the response, their D1 queries and billed rows, by call. */
export interface RecordingCost {
  misses: number;
  /** `record` (the writer), `learn_soon` and the alarm's `learn_batch` (the learner, with TEMPLATE_INDUCTION on) per miss: object requests. */
  doCallsPerMiss: number;
  /** D1 queries (statements; a batch counts each of its statements) the objects made per miss. */
  d1QueriesPerMiss: number;
  /** Rows D1 billed (its own meta) for the tree objects' work, per miss. */
  rowsReadPerMiss: number;
  rowsWrittenPerMiss: number;
  /** The Worker's own D1 work after the misses' responses (their `worker.after_response` lines), per miss. */
  workerAfter: { d1QueriesPerMiss: number; rowsReadPerMiss: number; rowsWrittenPerMiss: number; doCallsPerMiss: number };
  /** The trees' HitTally writes in the run (each carries the misses' recent-requests rows and the polls' hit counts). */
  tally: { flushes: number; d1QueriesPerFlush: number; rowsReadPerFlush: number; rowsWrittenPerFlush: number };
  byCall: Record<string, CallCost>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** This Worker's TALLY_FLUSH_MS and COUNTER_FLUSH_MS (short: its HitTally writes land inside the run) and a margin. */
const TALLY_FLUSH_MS = "2000";
const TALLY_WAIT_MS = 1000 + Number(TALLY_FLUSH_MS) + 2000;

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
  const dev = await startWranglerDev({
    config: snapshot.config,
    vars: { UPSTREAM_BASE_URL: upstreamUrl, LOG_LEVEL: "debug", TALLY_FLUSH_MS, COUNTER_FLUSH_MS: "1000" },
    logLevel: "log",
  });
  try {
    const tag = `recording ${Date.now()}`;
    // The conversations so far are recorded first, as in the floors' misses: a miss then records its new turn only.
    const recordedBases = bases.slice(0, misses);
    await prime(dev.url, recordedBases);
    await sleep(2000); // the priming's learners finish: only the misses' lines are counted
    const mark = dev.output().length;
    const bodies = Array.from({ length: misses }, (_, i) => uniqueMiss(recordedBases[i % recordedBases.length], `${tag} ${i}`));
    const missIds = new Set<string>();
    for (const body of bodies) {
      const res = await post(dev.url, body, HEADERS);
      await res.arrayBuffer();
      missIds.add(res.headers.get("x-request-id") ?? "");
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
    // The learners finish, and the trees' HitTally objects write (TALLY_FLUSH_MS after the counters' flush, COUNTER_FLUSH_MS).
    await sleep(2000 + Number(TALLY_WAIT_MS));
    const all = storeWorkLines(dev.output().slice(mark));
    const byCall: RecordingCost["byCall"] = {};
    for (const w of all) {
      // The Worker's after-response lines of other requests (the polls' hits) are not a recording's.
      if (w.object === "worker" && !missIds.has(w.request_id ?? "")) continue;
      const name = `${w.object}.${w.call}`;
      const c = (byCall[name] ??= { calls: 0, d1QueriesPerCall: 0, rowsReadPerCall: 0, rowsWrittenPerCall: 0 });
      c.calls++;
      c.d1QueriesPerCall += w.d1_queries;
      c.rowsReadPerCall += w.d1_rows_read ?? 0;
      c.rowsWrittenPerCall += w.d1_rows_written ?? 0;
    }
    for (const c of Object.values(byCall)) {
      c.d1QueriesPerCall /= c.calls;
      c.rowsReadPerCall /= c.calls;
      c.rowsWrittenPerCall /= c.calls;
    }
    if (!byCall["writer.record"] || byCall["writer.record"].calls < misses)
      throw new Error(`recording cost: ${byCall["writer.record"]?.calls ?? 0} record lines for ${misses} misses (is LOG_LEVEL debug reaching the objects?)`);
    const tree = all.filter((w) => w.object === "writer" || w.object === "learner");
    const after = all.filter((w) => w.object === "worker" && missIds.has(w.request_id ?? ""));
    const tally = all.filter((w) => w.object === "tally");
    const total = (xs: StoreWork[], f: (w: StoreWork) => number | undefined) => xs.reduce((a, w) => a + (f(w) ?? 0), 0);
    return {
      misses,
      doCallsPerMiss: tree.length / misses,
      d1QueriesPerMiss: total(tree, (w) => w.d1_queries) / misses,
      rowsReadPerMiss: total(tree, (w) => w.d1_rows_read) / misses,
      rowsWrittenPerMiss: total(tree, (w) => w.d1_rows_written) / misses,
      workerAfter: {
        d1QueriesPerMiss: total(after, (w) => w.d1_queries) / misses,
        rowsReadPerMiss: total(after, (w) => w.d1_rows_read) / misses,
        rowsWrittenPerMiss: total(after, (w) => w.d1_rows_written) / misses,
        doCallsPerMiss: total(after, (w) => w.do_calls) / misses,
      },
      tally: {
        flushes: tally.length,
        d1QueriesPerFlush: tally.length ? total(tally, (w) => w.d1_queries) / tally.length : 0,
        rowsReadPerFlush: tally.length ? total(tally, (w) => w.d1_rows_read) / tally.length : 0,
        rowsWrittenPerFlush: tally.length ? total(tally, (w) => w.d1_rows_written) / tally.length : 0,
      },
      byCall,
    };
  } finally {
    await dev.stop();
  }
}
