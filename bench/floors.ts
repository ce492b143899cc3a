import { resolve } from "node:path";
import { startWranglerDev, type WranglerDev, type WranglerDevOptions } from "../test/support/wrangler-dev";
import { readWorkload, requestsOf } from "../tools/workloads";
import { uniqueMiss, type Body } from "./bodies";
import { hitClasses, perRequest } from "./hit-classes";
import { allHits, chatSpec, HEADERS, log, prime } from "./http";
import { interleaved, runSegment, type Measure, type StoreCounts } from "./load";
import { missProbe, type MissProbeResult } from "./miss-probe";
import { insertedPerMiss, tableRows } from "./recording-rows";
import { templateCosts } from "./template-cost";
import { triple, type Row } from "./table";

const FLOORS = resolve(import.meta.dirname, "floors");
/** The unmeasured pass over the hot set before the hit rows: it outlasts the first refresh of the primed bodies (half of COLO_CACHE_TTL_MS). */
const WARM_UP_SECONDS = 3;
/** The warm-hit row's own load: the hot set cycled without pause, so each body comes back well within the TTL. */
const STEADY_SECONDS = 10;

/** The distinct recorded requests of the workload set (the shipped subset on a fresh clone), first `count`. */
export function hotSet(count: number): Body[] {
  const bodies = [...requestsOf(readWorkload("tau_bench.jsonl")), ...requestsOf(readWorkload("tau2_bench.jsonl"))].map((r) => r.body);
  if (bodies.length < count) throw new Error(`floors: the workloads hold ${bodies.length} distinct requests, fewer than ${count}`);
  return bodies.slice(0, count);
}

/** Starts a floor Worker of bench/floors/ under `wrangler dev` (no D1). */
export function startFloor(
  name: "static" | "relay" | "relay-object",
  vars: Record<string, string> = {},
  more: Pick<WranglerDevOptions, "inspector"> = {},
): Promise<WranglerDev> {
  return startWranglerDev({ config: resolve(FLOORS, `wrangler.${name}.toml`), migrate: [], vars, logLevel: "error", freeInspector: true, ...more });
}

export interface FloorContext {
  dev: WranglerDev;
  model: { url: string };
  hot: Body[];
  load: { seconds: number; rounds: number; connections: number };
  ttl: { hotMs: number; coloMs: number };
  missSamples: number;
  /**
   * Starts a Worker like `dev` with other vars: the hit-class probe needs a memory TTL shorter than the
   * colo's to see a colo hit in one isolate (with HOT_CACHE_TTL_MS = COLO_CACHE_TTL_MS, the default, an
   * isolate's memory and the colo entry it read lapse together; the colo serves other isolates).
   */
  startLike: (vars: Record<string, string>) => Promise<WranglerDev>;
}

const sum = (segments: Measure["segments"]): StoreCounts =>
  segments.reduce(
    (a, s) => ({
      responses: a.responses + s.store.responses,
      d1Queries: a.d1Queries + s.store.d1Queries,
      doCalls: a.doCalls + s.store.doCalls,
      colo: { hit: a.colo.hit + s.store.colo.hit, miss: a.colo.miss + s.store.colo.miss, none: a.colo.none + s.store.colo.none },
      rowsRead: (a.rowsRead ?? 0) + (s.store.rowsRead ?? 0),
      rowsWritten: (a.rowsWritten ?? 0) + (s.store.rowsWritten ?? 0),
    }),
    { responses: 0, d1Queries: 0, doCalls: 0, colo: { hit: 0, miss: 0, none: 0 }, rowsRead: 0, rowsWritten: 0 },
  );

/** The hit classes, in a Worker of their own when this one's memory TTL leaves no colo hit to see. */
async function hitClassesOf(ctx: FloorContext) {
  const sample = ctx.hot.slice(0, 10);
  if (ctx.ttl.hotMs < ctx.ttl.coloMs) return hitClasses(ctx.dev.url, sample, ctx.ttl);
  const ttl = { hotMs: Math.max(1, Math.floor(ctx.ttl.coloMs / 5)), coloMs: ctx.ttl.coloMs };
  const other = await ctx.startLike({ UPSTREAM_BASE_URL: ctx.model.url, HOT_CACHE_TTL_MS: String(ttl.hotMs) });
  try {
    await prime(other.url, sample);
    return await hitClasses(other.url, sample, ttl);
  } finally {
    await other.stop();
  }
}

const ms = (n: number) => `${n >= 0 ? "+" : ""}${n.toFixed(2)} ms`;

/** The rows against the bare floors (issue 14), and the per-request store counts the capacity model reads. */
export async function floorRows(ctx: FloorContext): Promise<{ rows: Row[]; results: Record<string, unknown>; capacity: Record<string, unknown> }> {
  const { dev, hot, load } = ctx;
  const floors: { static: WranglerDev; relay: WranglerDev; object?: WranglerDev } = {
    static: await startFloor("static"),
    relay: await startFloor("relay", { UPSTREAM_BASE_URL: ctx.model.url }),
  };
  try {
    log(`floors: priming ${hot.length} distinct bodies`);
    await prime(dev.url, hot);
    const rowsBefore = await tableRows(dev);
    const hitSpec = chatSpec("hit", hot);
    // Priming 240 bodies takes longer than COLO_CACHE_TTL_MS: one unmeasured pass makes the set warm, as a hot set is.
    log("floors: warm-up pass (unmeasured)");
    await runSegment(dev.url, hitSpec, WARM_UP_SECONDS, load.connections);
    log(`floors: warm hits, ${STEADY_SECONDS} s of the hot set at ${load.connections} connections`);
    const steady = await runSegment(dev.url, hitSpec, STEADY_SECONDS, load.connections);
    allHits("hit", { segments: [steady] });
    const staticSpec = { name: "static", url: floors.static.url, requests: [{ method: "GET", path: "/" }] };
    log("floors: hit vs bare static, 10 connections and 1 connection");
    // Each segment after WARM_UP_SECONDS of its own load: the hot set lapses during a static turn (3 s, then
    // the warm-up of the next), and the rows measure warm hits (the hit classes measure cold ones).
    const wide = await interleaved(dev.url, [staticSpec, hitSpec], { ...load, warmSeconds: WARM_UP_SECONDS });
    allHits("hit", wide.hit);
    const serial = await interleaved(dev.url, [staticSpec, hitSpec], { ...load, connections: 1, warmSeconds: WARM_UP_SECONDS });
    allHits("hit", serial.hit);
    // The warm-hit row reads the steady run; the interleaved runs (each hit segment after a static one) are reported beside it.
    const warm = sum([steady]);
    const interleavedCounts = sum([...wide.hit.segments, ...serial.hit.segments]);
    const cycleMs = (1000 * hot.length) / steady.rps;
    log("floors: hit classes (cold, memory, colo)");
    const classes = await hitClassesOf(ctx);
    // Started only now: one more idle `wrangler dev` beside the hit rows cost them throughput (0.40-0.41 with it).
    const objectUrl = (floors.object = await startFloor("relay-object", { UPSTREAM_BASE_URL: ctx.model.url })).url;
    const misses: Record<string, MissProbeResult> = {};
    const objectFloor: Record<string, MissProbeResult> = {};
    for (const stream of [false, true]) {
      for (const gapMs of [50, 0]) {
        const name = `${stream ? "streamed" : "JSON"}, ${gapMs ? "spaced 50 ms" : "back to back"}`;
        log(`floors: misses, ${name}`);
        misses[name] = await missProbe({
          proxyUrl: dev.url,
          relayUrl: floors.relay.url,
          upstreamUrl: ctx.model.url,
          makeBody: (i) => uniqueMiss(hot[(i + 3) % hot.length], `floor ${name} ${i} ${Date.now()}`),
          headers: HEADERS,
          samples: ctx.missSamples,
          gapMs,
          stream,
        });
        // The least outcomes 1 and 3 let a miss do before it forwards (a colo read, one object call with one D1 read), in a bare Worker (bench/floors/relay-object.ts).
        objectFloor[name] = await missProbe({
          proxyUrl: objectUrl,
          relayUrl: floors.relay.url,
          upstreamUrl: ctx.model.url,
          makeBody: (i) => uniqueMiss(hot[(i + 5) % hot.length], `object floor ${name} ${i} ${Date.now()}`),
          headers: HEADERS,
          samples: ctx.missSamples,
          gapMs,
          stream,
          expect: null,
        });
      }
    }
    await new Promise((r) => setTimeout(r, 1000)); // the last recordings land
    const rowsAfter = await tableRows(dev);
    const missCount = Object.values(misses).reduce((a, m) => a + m.proxy.samples + 3, 0);
    log("floors: store calls in a tree with learned templates (learned-template hits, full misses)");
    const templates = await templateCosts(dev, ctx.ttl);

    const rows: Row[] = [];
    const perHit = perRequest(warm);
    rows.push({
      row: `warm hit: D1 queries / DO calls per request (${hot.length} distinct bodies after a ${WARM_UP_SECONDS} s warm-up pass, cycled for ${STEADY_SECONDS} s at ${load.connections} connections, each back every ${(cycleMs / 1000).toFixed(1)} s; HOT_CACHE_TTL_MS ${ctx.ttl.hotMs}, COLO_CACHE_TTL_MS ${ctx.ttl.coloMs})`,
      target: "0 / 0",
      value: `${perHit.d1Queries.toFixed(3)} / ${perHit.doCalls.toFixed(3)}`,
      met: warm.d1Queries === 0 && warm.doCalls === 0 && cycleMs < ctx.ttl.coloMs,
      detail: `${warm.responses} hits from server-timing: ${warm.d1Queries} D1 queries, ${warm.doCalls} DO calls; colo reads ${warm.colo.hit} hit / ${warm.colo.miss} miss, ${warm.colo.none} from isolate memory. The throughput rows' hits (each hit segment after ${WARM_UP_SECONDS} s of unmeasured hits, following a static one): ${interleavedCounts.responses} hits, ${interleavedCounts.d1Queries} D1 queries, ${interleavedCounts.doCalls} DO calls, colo ${interleavedCounts.colo.hit} hit / ${interleavedCounts.colo.miss} miss, ${interleavedCounts.colo.none} memory`,
    });
    const ratio = wide.hit.rps / wide.static.rps;
    rows.push({
      row: "hit throughput / bare static Hono floor",
      target: "≥ 0.45",
      value: ratio.toFixed(2),
      met: ratio >= 0.45,
      detail: `${load.connections} connections. ${triple("static", wide.static)}; ${triple("hit", wide.hit)}`,
    });
    const dp50 = serial.hit.p50 - serial.static.p50;
    rows.push({
      row: "hit p50 − bare static p50",
      target: "≤ 1 ms",
      value: ms(dp50),
      met: dp50 <= 1,
      detail: `1 connection. ${triple("static", serial.static)}; ${triple("hit", serial.hit)}`,
    });
    for (const [name, m] of Object.entries(misses)) {
      const over = m.proxy.p50 - m.relay.p50;
      const p = m.phases;
      rows.push({
        row: `miss overhead over the bare relay floor, p50 (${name}${name.startsWith("streamed") ? ", TTFB" : ", whole body"})`,
        target: "≤ 2 ms",
        value: ms(over),
        met: over <= 2,
        detail: `${m.proxy.samples} samples each. object floor over the relay ${ms(objectFloor[name].proxy.p50 - objectFloor[name].relay.p50)} (its own run: ${objectFloor[name].proxy.p50.toFixed(2)} vs relay ${objectFloor[name].relay.p50.toFixed(2)} ms); proxy ${m.proxy.p50.toFixed(2)} / ${m.proxy.p99.toFixed(2)} ms, relay ${m.relay.p50.toFixed(2)} / ${m.relay.p99.toFixed(2)} ms, direct ${m.direct.p50.toFixed(2)} / ${m.direct.p99.toFixed(2)} ms (relay − direct ${ms(m.relay.p50 - m.direct.p50)}); server-timing medians: d1 ${p.d1 ?? 0}, do ${p.do ?? 0}, parse ${p.parse ?? 0}, lookup ${p.lookup ?? 0}, claim ${p.claim ?? 0}, total ${p.total ?? 0} ms; per miss ${(m.store.d1Queries / m.store.responses).toFixed(2)} D1 queries, ${(m.store.doCalls / m.store.responses).toFixed(2)} DO calls`,
      });
    }
    const allMiss = Object.values(misses).reduce(
      (a, m) => ({
        responses: a.responses + m.store.responses,
        d1: a.d1 + m.store.d1Queries,
        do: a.do + m.store.doCalls,
        read: a.read + (m.store.rowsRead ?? 0),
        written: a.written + (m.store.rowsWritten ?? 0),
      }),
      { responses: 0, d1: 0, do: 0, read: 0, written: 0 },
    );
    const capacity = {
      hitWarm: perRequest(classes.warm),
      hitColo: perRequest(classes.colo),
      hitCold: perRequest(classes.cold),
      hitUnderLoad: { ...perHit, coloHitShare: warm.colo.hit / warm.responses, memoryShare: warm.colo.none / warm.responses, distinctBodies: hot.length },
      miss: {
        responses: allMiss.responses,
        d1Queries: allMiss.d1 / allMiss.responses,
        doCalls: allMiss.do / allMiss.responses,
        rowsRead: allMiss.read / allMiss.responses,
        rowsWritten: allMiss.written / allMiss.responses,
      },
      recording: {
        misses: missCount,
        nodesWrittenPerMiss: (rowsAfter.nodes - rowsBefore.nodes) / missCount,
        rowsInsertedPerMiss: insertedPerMiss(rowsBefore, rowsAfter, missCount),
      },
      templateHit: templates.learnedHit,
      templateMiss: templates.fullMiss,
    };
    return { rows, results: { steady, wide, serial, classes, misses, objectFloor, cycleMs }, capacity };
  } finally {
    await floors.static.stop();
    await floors.relay.stop();
    await floors.object?.stop();
  }
}
