/**
 * The floors bench's miss rows alone, for before/after work on the miss path:
 * `npx tsx bench/miss-floor-probe.ts [samples] [LOG_LEVEL]` bundles the Worker
 * (a snapshot, so that edits in the checkout do not reload it), starts it and
 * the bare relay floor under `wrangler dev` with a scripted upstream, and runs
 * bench/miss-probe.ts JSON and streamed, spaced 50 ms and back to back. Prints
 * one line per row: proxy, relay and direct p50, the overhead over the relay,
 * the server-timing medians and the CPU per miss of each `wrangler dev` process tree.
 * `MM_ROOT=/tmp/base` bundles the Worker from another worktree instead (the probe and the floors stay this checkout's).
 * `MM_INSPECTOR=off` runs both Workers without wrangler's DevTools inspector.
 * Each row is followed by the object floor's (bench/floors/relay-object.ts:
 * the relay plus body parse, hash, a colo Cache API read and one Durable
 * Object call running one D1 read), the same probe with that bare Worker in the proxy's place.
 * Then the fast-miss row: one conversation that grows by a turn per sample (the model's
 * answer echoed, then a new user message), so that each request extends the answer the
 * previous one recorded (a leaf this isolate knows to be childless: src/engine/lookup/childless.ts);
 * `fast k/n` says how many made no lookup.
 */
import { startScriptedModel } from "../tools/scripted-model";
import { uniqueMiss, type Body } from "./bodies";
import { hotSet, startFloor } from "./floors";
import { HEADERS, log } from "./http";
import { missProbe } from "./miss-probe";
import { snapshotWorker, startSnapshotDev } from "./snapshot";
import { cpuOf, cpuPerRequest, varsOf } from "./proc-cpu";

const samples = Number(process.argv[2] ?? 60);
const logLevel = process.argv[3];
/** More vars for the Worker, `MM_VARS=TEMPLATE_INDUCTION=off,COLO_CACHE_TTL_MS=0`: what a part of the miss costs. */
const extraVars = varsOf(process.env.MM_VARS);
const hot = hotSet(40);
/** What the scripted model always answers: a client echoes it in its next request. */
const ANSWER = "Let me check that reservation for you.";
const model = await startScriptedModel({ chunkChars: 64, script: () => ({ role: "assistant", content: ANSWER }) });
/** `MM_INSPECTOR=off`: the Worker and the relay floor both run without wrangler's DevTools inspector (test/support/dev-without-inspector.ts). */
const more = process.env.MM_INSPECTOR === "off" ? { inspector: false as const } : {};
/** `MM_ROOT=/tmp/base`: the Worker bundled from another worktree (a before/after of the miss path; the probe and floors stay this checkout's). */
const snapshot = await snapshotWorker(undefined, process.env.MM_ROOT || undefined);
const dev = await startSnapshotDev(snapshot, { UPSTREAM_BASE_URL: model.url, ...(logLevel ? { LOG_LEVEL: logLevel } : {}), ...extraVars }, more);
const relay = await startFloor("relay", { UPSTREAM_BASE_URL: model.url }, more);
const objectFloor = await startFloor("relay-object", { UPSTREAM_BASE_URL: model.url }, more);
/** The conversation one turn on: the model's answer as a client echoes it, then a new user message. */
function extend(body: Body, i: number): Body {
  return { ...body, messages: [...body.messages, { role: "assistant", content: ANSWER }, { role: "user", content: `And then? (${i})` }] };
}
let i0 = 11;
try {
  for (const stream of [false, true]) {
    for (const gapMs of [50, 0]) {
      const name = `${stream ? "streamed" : "JSON"}, ${gapMs ? "spaced" : "back to back"}`;
      const cpu = { dev: cpuOf(dev.pid), relay: cpuOf(relay.pid) };
      const m = await missProbe({
        proxyUrl: dev.url,
        relayUrl: relay.url,
        upstreamUrl: model.url,
        makeBody: (i) => uniqueMiss(hot[(i + 3) % hot.length], `probe ${name} ${i} ${Date.now()}`),
        headers: HEADERS,
        samples,
        gapMs,
        stream,
      });
      await new Promise((r) => setTimeout(r, 500)); // the last recording lands
      const p = m.phases;
      const n = samples + 3;
      log(
        `${name.padEnd(22)} over relay ${(m.proxy.p50 - m.relay.p50).toFixed(2)} ms | proxy ${m.proxy.p50.toFixed(2)} / ${m.proxy.p99.toFixed(2)}, relay ${m.relay.p50.toFixed(2)} / ${m.relay.p99.toFixed(2)}, direct ${m.direct.p50.toFixed(2)} | st: d1 ${p.d1 ?? 0} do ${p.do ?? 0} parse ${p.parse ?? 0} lookup ${p.lookup ?? 0} claim ${p.claim ?? 0} total ${p.total ?? 0} | CPU ms per miss: worker ${cpuPerRequest(cpu.dev, cpuOf(dev.pid), n)}; relay ${cpuPerRequest(cpu.relay, cpuOf(relay.pid), n)}`,
      );
      const o = await missProbe({
        proxyUrl: objectFloor.url,
        relayUrl: relay.url,
        upstreamUrl: model.url,
        makeBody: (i) => uniqueMiss(hot[(i + 5) % hot.length], `object floor ${name} ${i} ${Date.now()}`),
        headers: HEADERS,
        samples,
        gapMs,
        stream,
        expect: null,
      });
      log(
        `${"  object floor".padEnd(22)} over relay ${(o.proxy.p50 - o.relay.p50).toFixed(2)} ms | object floor ${o.proxy.p50.toFixed(2)} / ${o.proxy.p99.toFixed(2)}, relay ${o.relay.p50.toFixed(2)} / ${o.relay.p99.toFixed(2)}, direct ${o.direct.p50.toFixed(2)} | looked-up miss over object floor ${(m.proxy.p50 - o.proxy.p50).toFixed(2)} ms`,
      );
      let chain: Body = uniqueMiss(hot[(i0 += 7) % hot.length], `chain ${name} ${Date.now()}`);
      const fastCpu = { dev: cpuOf(dev.pid), relay: cpuOf(relay.pid) };
      const f = await missProbe({
        proxyUrl: dev.url,
        relayUrl: relay.url,
        upstreamUrl: model.url,
        makeBody: (i) => (i === -3 ? chain : (chain = extend(chain, i))),
        headers: HEADERS,
        samples,
        gapMs,
        stream,
      });
      await new Promise((r) => setTimeout(r, 500));
      const q = f.phases;
      log(
        `${"  fast miss".padEnd(22)} over relay ${(f.proxy.p50 - f.relay.p50).toFixed(2)} ms | fast ${f.fast}/${samples} | proxy ${f.proxy.p50.toFixed(2)} / ${f.proxy.p99.toFixed(2)}, relay ${f.relay.p50.toFixed(2)} / ${f.relay.p99.toFixed(2)}, direct ${f.direct.p50.toFixed(2)} | st: d1 ${q.d1 ?? 0} do ${q.do ?? 0} total ${q.total ?? 0} | CPU ms per miss: worker ${cpuPerRequest(fastCpu.dev, cpuOf(dev.pid), n)}; relay ${cpuPerRequest(fastCpu.relay, cpuOf(relay.pid), n)}`,
      );
    }
  }
} finally {
  await objectFloor.stop();
  await dev.stop();
  await relay.stop();
  await model.close();
  snapshot.remove();
}
