/**
 * Whose CPU a miss costs under `wrangler dev`: `npx tsx bench/profile-split.ts [rounds] [per round]`.
 * Starts the Worker (this checkout's src/, not a snapshot) and the bare relay floor (bench/floors/relay.ts) under
 * `wrangler dev`, each with its DevTools inspector, and a scripted upstream. Each round sends, one after the
 * other and each kind under a CPU profile of its own Worker's isolate: `per round` looked-up misses (a new
 * conversation each), `per round` fast misses (one conversation that grows a turn per request, as
 * bench/miss-floor-probe.ts's fast row), and `per round` requests to the relay floor; each profile runs on
 * 300 ms after its last response, so that the recording, the learner's alarm (100 ms) and their D1 work land
 * in it. The samples are attributed by bench/profile-classes.ts (the Worker's request path, writer, learner,
 * HitTally, the runtime's own JS, GC, native) and printed as ms per request, beside the /proc CPU of each
 * `wrangler dev` process tree per request (which also holds local D1's SQLite and workerd's I/O threads).
 * A profile sample lasts until the next one: on a loaded machine it counts time the thread was runnable
 * but not running, so compare the classes' shares and the kinds within one run.
 * `MM_VARS=TEMPLATE_INDUCTION=off`: more vars for the Worker (what a part of the miss costs).
 */
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { startWranglerDev, freePort, type WranglerDev } from "../test/support/wrangler-dev";
import { startScriptedModel } from "../tools/scripted-model";
import { uniqueMiss, type Body } from "./bodies";
import { hotSet } from "./floors";
import { HEADERS, log } from "./http";
import { cpuOf, varsOf } from "./proc-cpu";
import { CLASSES, devtools, moduleIndex, splitProfile, type Class, type ModuleIndex, type Profile, type Send } from "./profile-classes";

const ROUNDS = Number(process.argv[2] ?? 4);
const PER_ROUND = Number(process.argv[3] ?? 75);
const TAIL_MS = 300;
/** `MM_INTERVAL_US=100`: the profiler's sampling interval (µs); coarser costs the profiled thread less. */
const INTERVAL_US = Number(process.env.MM_INTERVAL_US ?? 500);
/** `MM_TOP=25`: how many (class, module) pairs to list per kind (where each class's time goes). */
const TOP = Number(process.env.MM_TOP ?? 25);
const ANSWER = "Let me check that reservation for you.";
const hot = hotSet(40);

async function post(url: string, body: Body): Promise<Response> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", ...HEADERS },
    body: JSON.stringify(body),
  });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`profile-split: ${url} answered ${res.status}`);
  return res;
}

interface Target {
  dev: WranglerDev;
  send: Send;
  modules: ModuleIndex;
  close: () => void;
}

async function start(config: string | undefined, vars: Record<string, string>, migrate?: string[]): Promise<Target> {
  const inspectorPort = await freePort();
  const dev = await startWranglerDev({ config, vars, logLevel: "error", inspectorPort, ...(migrate ? { migrate } : {}) });
  const { send, close } = await devtools(inspectorPort);
  const modules: ModuleIndex = new Map();
  await send("Profiler.enable");
  await send("Profiler.setSamplingInterval", { interval: INTERVAL_US });
  return { dev, send, modules, close };
}

interface Tally {
  requests: number;
  classes: Record<Class, number>;
  proc: Record<string, number>;
  outcomes: Record<string, number>;
  fast: number;
  leaves: Map<string, number>;
}
const tallies = new Map<string, Tally>();

/** Sends `bodies` (one after the other) under a CPU profile of `target`'s isolate, and adds its split to `kind`. */
async function profiled(kind: string, target: Target, url: string, bodies: (i: number) => Body): Promise<void> {
  const t: Tally = tallies.get(kind) ?? {
    requests: 0,
    classes: Object.fromEntries(CLASSES.map((c) => [c, 0])) as Record<Class, number>,
    proc: {},
    outcomes: {},
    fast: 0,
    leaves: new Map(),
  };
  tallies.set(kind, t);
  const before = cpuOf(target.dev.pid);
  await target.send("Profiler.start");
  for (let i = 0; i < PER_ROUND; i++) {
    const res = await post(url, bodies(i));
    const outcome = res.headers.get("muscle-mem-cache") ?? "none";
    t.outcomes[outcome] = (t.outcomes[outcome] ?? 0) + 1;
    if (outcome === "miss" && !/(^|,)\s*lookup;/.test(res.headers.get("server-timing") ?? "")) t.fast++;
  }
  await new Promise((r) => setTimeout(r, TAIL_MS));
  const { profile } = (await target.send("Profiler.stop")) as unknown as { profile: Profile };
  const after = cpuOf(target.dev.pid);
  for (const k of Object.keys(after)) t.proc[k] = (t.proc[k] ?? 0) + 1000 * (after[k] - (before[k] ?? 0));
  if (process.env.MM_PROFILE_OUT) writeFileSync(`${process.env.MM_PROFILE_OUT}-${kind.replace(/\W+/g, "-")}.cpuprofile`, JSON.stringify(profile));
  await moduleIndex(
    target.send,
    profile.nodes.map((n) => n.callFrame.scriptId),
    target.modules,
  );
  if (process.env.MM_PROFILE_OUT)
    writeFileSync(`${process.env.MM_PROFILE_OUT}-${kind.replace(/\W+/g, "-")}.modules.json`, JSON.stringify(Object.fromEntries(target.modules)));
  const split = splitProfile(profile, target.modules, t.leaves);
  for (const c of CLASSES) t.classes[c] += split[c];
  t.requests += PER_ROUND;
}

const model = await startScriptedModel({ script: () => ({ role: "assistant", content: ANSWER }) });
// The repo's wrangler.toml, not a snapshot: wrangler dev re-bundles a snapshot's dist/index.js as one module,
// which drops the `// src/…` module comments the attribution reads (this clone is not edited during a run).
const worker = await start(undefined, { IMPORT_TENANTS: "*", UPSTREAM_BASE_URL: model.url, ...varsOf(process.env.MM_VARS) });
const relay = await start(resolve(import.meta.dirname, "floors/wrangler.relay.toml"), { UPSTREAM_BASE_URL: model.url }, []);
try {
  const stamp = Date.now();
  // Warm-up, unprofiled: both isolates compiled, the tree's objects started.
  for (let i = 0; i < 10; i++) {
    await post(worker.dev.url, uniqueMiss(hot[i % hot.length], `warm ${stamp} ${i}`));
    await post(relay.dev.url, uniqueMiss(hot[i % hot.length], `warm ${stamp} ${i}`));
  }
  for (let round = 0; round < ROUNDS; round++) {
    await profiled("looked-up miss", worker, worker.dev.url, (i) => uniqueMiss(hot[(i + round) % hot.length], `split ${stamp} ${round} ${i}`));
    let chain = uniqueMiss(hot[(round * 7 + 3) % hot.length], `chain ${stamp} ${round}`);
    await profiled("fast miss", worker, worker.dev.url, (i) =>
      i === 0
        ? chain
        : (chain = { ...chain, messages: [...chain.messages, { role: "assistant", content: ANSWER }, { role: "user", content: `And then? (${i})` }] }),
    );
    await profiled("relay floor", relay, relay.dev.url, (i) => uniqueMiss(hot[(i + round) % hot.length], `relay ${stamp} ${round} ${i}`));
    log(`round ${round + 1}/${ROUNDS} done`);
  }
  const rows = [...tallies].map(([kind, t]) => {
    const per = (ms: number) => Number((ms / t.requests).toFixed(2));
    const busy = CLASSES.filter((c) => c !== "idle").reduce((a, c) => a + t.classes[c], 0);
    return {
      kind,
      requests: t.requests,
      fast: t.fast,
      ...Object.fromEntries(CLASSES.map((c) => [c, per(t.classes[c])])),
      "isolate busy": per(busy),
      ...Object.fromEntries(Object.entries(t.proc).map(([k, v]) => [`proc ${k}`, per(v)])),
    };
  });
  log("ms per request (profile samples by class; proc: /proc CPU of the wrangler dev process tree)");
  console.table(rows);
  console.log(JSON.stringify(rows));
  for (const [kind, t] of tallies) {
    const top = [...t.leaves]
      .filter(([k]) => !/^(idle|program|GC):/.test(k))
      .sort((a, b) => b[1] - a[1])
      .slice(0, TOP);
    log(`${kind}: where each class's time goes: the nearest module on the stack, ms per request`);
    for (const [k, ms] of top) console.log(`  ${(ms / t.requests).toFixed(2).padStart(6)}  ${k}`);
  }
} finally {
  worker.close();
  relay.close();
  await worker.dev.stop();
  await relay.dev.stop();
  await model.close();
}
