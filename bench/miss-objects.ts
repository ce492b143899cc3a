/**
 * What the tree's objects spend per recorded miss, after the response (which no `server-timing` shows):
 * `npx tsx bench/miss-objects.ts [misses] [spacing ms, 100]` runs the Worker (a snapshot) at LOG_LEVEL debug,
 * where the writer logs each `record` call and the learner each `learn_soon` call and each alarm's batch (`learn_batch`) with its D1
 * queries and their wall time (`store_work`, src/observability/store-meter.ts). Two kinds of recorded miss,
 * spaced 100 ms (or `spacing`; 0 is back to back, where the learner's alarm gathers several recordings):
 * looked-up misses (a new turn of a recorded conversation each) and fast misses (one conversation that
 * grows a turn per request, each extending the answer the previous one recorded). Prints, per kind and per
 * recorded miss, the object calls and their D1 queries and milliseconds by call, and the Worker's
 * `server-timing` medians. A run of its own: the debug logging never slows a measured row.
 */
import { startScriptedModel } from "../tools/scripted-model";
import { uniqueMiss, type Body } from "./bodies";
import { hotSet } from "./floors";
import { HEADERS, log, post, prime, serverTimingOf, medianPhases } from "./http";
import { snapshotWorker } from "./snapshot";
import { startWranglerDev } from "../test/support/wrangler-dev";

const misses = Number(process.argv[2] ?? 30);
const spacingMs = Number(process.argv[3] ?? 100);
const ANSWER = "Let me check that reservation for you.";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Work {
  object: string;
  call: string;
  d1_queries: number;
  d1_ms: number;
}

function workLines(output: string): Work[] {
  const out: Work[] = [];
  for (const line of output.split("\n")) {
    const start = line.indexOf('{"event":"store_work"');
    if (start < 0) continue;
    try {
      out.push(JSON.parse(line.slice(start)) as Work);
    } catch {
      // A line cut by the terminal: not counted.
    }
  }
  return out;
}

const model = await startScriptedModel({ script: () => ({ role: "assistant", content: ANSWER }) });
const snapshot = await snapshotWorker();
const dev = await startWranglerDev({ config: snapshot.config, vars: { UPSTREAM_BASE_URL: model.url, LOG_LEVEL: "debug" }, logLevel: "log" });
try {
  const bases = hotSet(misses);
  await prime(dev.url, bases);
  await sleep(2000);
  let chain: Body = uniqueMiss(bases[0], `objects chain ${Date.now()}`);
  await (await post(dev.url, chain, HEADERS)).arrayBuffer();
  await sleep(500);
  const kinds: Array<[string, (i: number) => Body]> = [
    ["looked-up miss", (i) => uniqueMiss(bases[i % bases.length], `objects ${Date.now()} ${i}`)],
    [
      "fast miss",
      (i) => (chain = { ...chain, messages: [...chain.messages, { role: "assistant", content: ANSWER }, { role: "user", content: `And then? (${i})` }] }),
    ],
  ];
  for (const [kind, bodyOf] of kinds) {
    const mark = dev.output().length;
    const timings: Array<Record<string, number>> = [];
    let fast = 0;
    for (let i = 0; i < misses; i++) {
      const res = await post(dev.url, bodyOf(i), HEADERS);
      await res.arrayBuffer();
      if (res.headers.get("muscle-mem-cache") !== "miss") throw new Error(`miss objects: a new request was a ${res.headers.get("muscle-mem-cache")}`);
      const t = serverTimingOf(res);
      if (t.lookup === undefined) fast++;
      timings.push(t);
      if (spacingMs > 0) await sleep(spacingMs);
    }
    await sleep(2000); // the last recordings and learners finish
    const byCall = new Map<string, { calls: number; queries: number; ms: number }>();
    for (const w of workLines(dev.output().slice(mark))) {
      const c = byCall.get(`${w.object}.${w.call}`) ?? { calls: 0, queries: 0, ms: 0 };
      c.calls++;
      c.queries += w.d1_queries;
      c.ms += w.d1_ms;
      byCall.set(`${w.object}.${w.call}`, c);
    }
    const calls = [...byCall].map(
      ([name, c]) => `${name} ${(c.calls / misses).toFixed(2)} calls, ${(c.queries / misses).toFixed(2)} D1 queries, ${(c.ms / misses).toFixed(2)} D1 ms`,
    );
    const p = medianPhases(timings);
    log(
      `${kind.padEnd(15)} spaced ${spacingMs} ms, per recorded miss: ${calls.join("; ")} | fast ${fast}/${misses} | st medians: d1 ${p.d1 ?? 0} ms, do ${p.do ?? 0} ms, total ${p.total ?? 0} ms`,
    );
  }
} finally {
  await dev.stop();
  await model.close();
  snapshot.remove();
}
