/**
 * Moving a 10k-node tree between two local shards under load (bench/scale.ts).
 *
 * One `wrangler dev` over four local D1 databases (scripts/shard-load-dev.ts),
 * `D1_SHARDS=DB,DB_1`, with HOT_CACHE_TTL_MS and COLO_CACHE_TTL_MS at 0 so that
 * every hit reads the tree's shard through its object while the rows move
 * (the hardest case: no memory hides the move). The tree is seeded by
 * `POST /api/import` (two-turn conversations and a few disputed prompts
 * recorded with two different answers, which must never be served). Then
 * 4 connections replay recorded paths (`only-if-cached`: a miss is a 504,
 * never a call to the model) and 1 connection sends new prompts (misses
 * the scripted model answers and the tree records) while
 * `POST /api/trees/:id/move` runs. Every answer is checked: a recorded path
 * must get its recorded text, a disputed one no answer, a new prompt the
 * model's answer. Afterwards every path and every recording made under load
 * (a sample of the paths; every disputed one) must be served from the target,
 * and the source must hold none of the tree.
 */
import { createHash, randomBytes } from "node:crypto";
import { BINDINGS, buildWorker } from "../scripts/shard-load-dev";
import { startWranglerDev, type WranglerDev } from "../test/support/wrangler-dev";
import { startScriptedModel } from "../tools/scripted-model";
import { log } from "./http";
import { percentile } from "./load";
import { ask, importLines, judge, seedTree, treeIdOf, type Probe } from "./scale-seed";
import type { Row } from "./table";

const KEY = "Bearer sk-bench-move";
const NAMESPACE = "move";
const MODEL = "move-model";
const CONTROL = "move-control";

export interface MoveOptions {
  /** Two-turn conversations to import (5 nodes each but the shared system message: 2,500 is ~10k nodes). */
  conversations: number;
  disputed: number;
  hitConnections: number;
  /** Seconds of load before the move starts and after it ends. */
  marginSeconds: number;
  /** Recorded paths read back before and after the move (a random sample, with every disputed one). */
  checked: number;
}

/** A deterministic answer no learned template can derive from the request. */
const answerOf = (text: string) => `Noted, reference ${createHash("sha256").update(text).digest("hex").slice(0, 12)}.`;

interface Tick {
  start: number;
  end: number;
  kind: "hit" | "miss" | "control" | "healthz";
  verdict: "right" | "wrong" | "miss" | "error";
  status: number;
  error?: string;
}

/** Replays `probes` with `connections` at a time; the verdicts. */
async function checkAll(url: string, probes: readonly Probe[], connections: number): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  let next = 0;
  const worker = async () => {
    while (next < probes.length) {
      const p = probes[next++];
      const v = judge(p, await ask(url, KEY, NAMESPACE, p.body).catch(() => ({ status: 0, cache: null, node: null, content: null })));
      out[v] = (out[v] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  return out;
}

async function nodesIn(dev: WranglerDev, binding: string, treeId: string): Promise<number> {
  const [row] = await dev.sql(`SELECT count(*) AS n FROM nodes WHERE tree_id = '${treeId}'`, binding);
  return Number(row?.n ?? 0);
}

export async function moveRows(opts: MoveOptions): Promise<{ rows: Row[]; results: Record<string, unknown> }> {
  const model = await startScriptedModel({ script: (body) => ({ role: "assistant", content: answerOf(String(body.messages.at(-1)?.content ?? "")) }) });
  const build = await buildWorker();
  const admin = randomBytes(16).toString("hex");
  const vars = {
    UPSTREAM_BASE_URL: model.url,
    D1_SHARDS: "DB,DB_1",
    ADMIN_TOKEN: admin,
    HOT_CACHE_TTL_MS: "0",
    COLO_CACHE_TTL_MS: "0",
    LOG_LEVEL: "warn",
    IMPORT_TENANTS: "*",
  };
  const dev = await startWranglerDev({ config: build.config, vars, logLevel: "error", migrate: BINDINGS, freeInspector: true, readyTimeoutMs: 90_000 });
  try {
    const seed = seedTree(MODEL, opts.conversations, { disputed: opts.disputed, tag: "move" });
    const t0 = Date.now();
    const imported = await importLines(dev.url, KEY, NAMESPACE, seed.lines);
    const treeId = await treeIdOf(dev.url, KEY, NAMESPACE);
    const control = seedTree(MODEL, 50, { turns: 1, tag: "control" });
    await importLines(dev.url, KEY, CONTROL, control.lines);
    const [dir] = await dev.sql(`SELECT shard FROM tree_directory WHERE tree_id = '${treeId}'`);
    const from = String(dir?.shard ?? "");
    const to = from === "DB" ? "DB_1" : "DB";
    const treeNodes = await nodesIn(dev, from, treeId);
    log(
      `move: imported ${imported.nodes_inserted} nodes (${treeNodes} in ${from}) in ${((Date.now() - t0) / 1000).toFixed(1)} s; checking a sample of paths before the move`,
    );
    const sample = [
      ...seed.probes.filter((p) => p.expected === null),
      ...seed.probes
        .filter((p) => p.expected !== null)
        .sort(() => Math.random() - 0.5)
        .slice(0, opts.checked),
    ];
    const before = await checkAll(dev.url, sample, opts.hitConnections);

    const ticks: Tick[] = [];
    const recorded: Probe[] = [];
    let stop = false;
    const hitter = async (probes: readonly Probe[], namespace: string, kind: "hit" | "control") => {
      while (!stop) {
        const p = probes[Math.floor(Math.random() * probes.length)];
        const start = performance.now();
        const a = await ask(dev.url, KEY, namespace, p.body).catch((e: unknown) => ({ status: 0, cache: null, node: null, content: null, error: String(e) }));
        ticks.push({ start, end: performance.now(), kind, verdict: judge(p, a), status: a.status, error: a.error });
      }
    };
    const misser = async () => {
      for (let i = 0; !stop; i++) {
        const text = `[move] New question ${i} at ${Date.now()}`;
        const p: Probe = {
          body: {
            model: MODEL,
            messages: [
              { role: "system", content: seed.probes[0].body.messages[0].content },
              { role: "user", content: text },
            ],
          },
          expected: answerOf(text),
        };
        const start = performance.now();
        const a = await ask(dev.url, KEY, NAMESPACE, p.body, false).catch((e: unknown) => ({
          status: 0,
          cache: null,
          node: null,
          content: null,
          error: String(e),
        }));
        ticks.push({ start, end: performance.now(), kind: "miss", verdict: judge(p, a), status: a.status, error: a.error });
        if (a.status === 200) recorded.push(p);
      }
    };
    // `GET /healthz` every 100 ms (no D1, no object): whether it waits too tells the Worker's runtime from the tree's object.
    const healthz = async () => {
      while (!stop) {
        const start = performance.now();
        const status = await fetch(`${dev.url}/healthz`).then(
          async (r) => (await r.arrayBuffer(), r.status),
          () => 0,
        );
        ticks.push({ start, end: performance.now(), kind: "healthz", verdict: status === 200 ? "right" : "error", status });
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    // One connection replays a small tree that does not move: whether hits elsewhere wait too tells the tree's object from the runtime.
    const load = Promise.all([
      ...Array.from({ length: opts.hitConnections }, () => hitter(seed.probes, NAMESPACE, "hit")),
      hitter(control.probes, CONTROL, "control"),
      misser(),
      healthz(),
    ]);
    await new Promise((r) => setTimeout(r, opts.marginSeconds * 1000));
    const moveStart = performance.now();
    const res = await fetch(`${dev.url}/api/trees/${treeId}/move`, {
      method: "POST",
      headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
      body: JSON.stringify({ to }),
    });
    const moveEnd = performance.now();
    const moved = (await res.json()) as Record<string, unknown>;
    log(`move: ${res.status} in ${((moveEnd - moveStart) / 1000).toFixed(1)} s`, moved);
    await new Promise((r) => setTimeout(r, opts.marginSeconds * 1000));
    stop = true;
    await load;

    // Recordings queued behind the move land when it ends: give them a moment, then read everything back.
    await new Promise((r) => setTimeout(r, 2000));
    const after = await checkAll(dev.url, [...sample, ...recorded], opts.hitConnections);
    const left = { source: await nodesIn(dev, from, treeId), target: await nodesIn(dev, to, treeId) };
    const during = ticks.filter((t) => t.end >= moveStart && t.end <= moveEnd);
    const overlapping = ticks.filter((t) => t.start < moveEnd && t.end > moveStart);
    const longest = (kind: Tick["kind"]) => Math.max(0, ...overlapping.filter((t) => t.kind === kind).map((t) => t.end - t.start));
    const count = (ts: Tick[], pick: (t: Tick) => boolean) => ts.filter(pick).length;
    const hitMs = (ts: Tick[]) =>
      ts
        .filter((t) => t.kind === "hit")
        .map((t) => t.end - t.start)
        .sort((a, b) => a - b);
    const beforeMove = hitMs(ticks.filter((t) => t.end < moveStart));
    const errorsSeen = ticks
      .filter((t) => t.verdict === "error")
      .slice(0, 5)
      .map((t) => ({ kind: t.kind, status: t.status, atS: ((t.start - moveStart) / 1000).toFixed(1), ms: Math.round(t.end - t.start), error: t.error }));
    if (errorsSeen.length) log("move: errors", errorsSeen, "wrangler dev's output, last 4000 characters:", dev.output().slice(-4000));
    const inMove = hitMs(during);
    // Where the longest waits of the move fell (s from its start): a stall shows as requests of every kind starting before it and ending together.
    const slowest = [...overlapping]
      .sort((a, b) => b.end - b.start - (a.end - a.start))
      .slice(0, 6)
      .map((t) => `${t.kind} ${((t.start - moveStart) / 1000).toFixed(2)}-${((t.end - moveStart) / 1000).toFixed(2)} s`);
    const results = {
      treeId,
      from,
      to,
      nodes: treeNodes,
      moveStatus: res.status,
      moved,
      moveSeconds: (moveEnd - moveStart) / 1000,
      before,
      after,
      left,
      load: {
        requests: count(ticks, (t) => t.kind !== "healthz"),
        hits: count(ticks, (t) => t.kind === "hit" && t.verdict === "right"),
        misses: count(ticks, (t) => t.kind === "miss"),
        wrong: count(ticks, (t) => t.verdict === "wrong"),
        errors: count(ticks, (t) => t.verdict === "error"),
        unexpectedMisses: count(ticks, (t) => t.verdict === "miss"),
        statuses: Object.fromEntries([...new Set(ticks.map((t) => t.status))].map((s) => [s, count(ticks, (t) => t.status === s)])),
      },
      duringMove: {
        requests: during.length,
        hitsServed: count(during, (t) => t.kind === "hit" && t.verdict === "right" && t.status === 200),
        disputedRefused: count(during, (t) => t.kind === "hit" && t.verdict === "right" && t.status === 504),
        misses: count(during, (t) => t.kind === "miss"),
        wrong: count(during, (t) => t.verdict === "wrong"),
        errors: count(during, (t) => t.verdict === "error"),
        unexpectedMisses: count(during, (t) => t.verdict === "miss"),
        hitP50: percentile(inMove, 0.5),
        hitP99: percentile(inMove, 0.99),
        inFlight: overlapping.length,
        longestHitMs: longest("hit"),
        controlServed: count(during, (t) => t.kind === "control" && t.verdict === "right"),
        healthzAnswered: count(during, (t) => t.kind === "healthz" && t.verdict === "right"),
        longestControlMs: longest("control"),
        longestHealthzMs: longest("healthz"),
      },
      errorsSeen,
      slowest,
      hitP50BeforeMove: percentile(beforeMove, 0.5),
      hitP99BeforeMove: percentile(beforeMove, 0.99),
    };
    return { rows: moveTable(results, recorded.length), results };
  } finally {
    await dev.stop();
    build.remove();
    await model.close();
  }
}

type MoveResults = {
  nodes: number;
  from: string;
  to: string;
  moveStatus: number;
  moveSeconds: number;
  before: Record<string, number>;
  after: Record<string, number>;
  left: { source: number; target: number };
  load: { requests: number; hits: number; misses: number; wrong: number; errors: number; unexpectedMisses: number; statuses: Record<string, number> };
  duringMove: {
    requests: number;
    hitsServed: number;
    disputedRefused: number;
    misses: number;
    wrong: number;
    errors: number;
    unexpectedMisses: number;
    hitP50: number;
    hitP99: number;
    inFlight: number;
    longestHitMs: number;
    controlServed: number;
    healthzAnswered: number;
    longestControlMs: number;
    longestHealthzMs: number;
  };
  errorsSeen: Array<{ kind: string; status: number; atS: string; ms: number; error?: string }>;
  slowest: string[];
  hitP50BeforeMove: number;
  hitP99BeforeMove: number;
};

function moveTable(r: MoveResults, recordings: number): Row[] {
  const what = `move of a ${r.nodes.toLocaleString("en-US")}-node tree ${r.from} → ${r.to} under load`;
  const d = r.duringMove;
  const l = r.load;
  const wrong = l.wrong + (r.after.wrong ?? 0) + (r.before.wrong ?? 0);
  const errors = l.errors + (r.after.error ?? 0) + (r.before.error ?? 0) + (r.moveStatus === 200 ? 0 : 1);
  const lost = (r.after.miss ?? 0) + (r.after.error ?? 0);
  const ms = (n: number) => `${n.toFixed(1)} ms`;
  return [
    {
      row: `${what}: wrong answers`,
      target: "0",
      value: String(wrong),
      met: wrong === 0,
      detail: `${l.requests} requests under load (${l.hits} hits, ${l.misses} new prompts), ${d.requests} while the move ran; wrong during the move ${d.wrong}; checks of sampled paths before / after: ${JSON.stringify(r.before)} / ${JSON.stringify(r.after)}`,
    },
    {
      row: `${what}: errors (non-2xx but a disputed path's 504, failed requests, the move's own status)`,
      target: "0",
      value: String(errors),
      met: errors === 0,
      detail: `statuses under load (GET /healthz included) ${JSON.stringify(l.statuses)}; move answered ${r.moveStatus}; recorded paths that missed (504) under load ${l.unexpectedMisses}, during the move ${d.unexpectedMisses}; errors seen (s from the move's start): ${JSON.stringify(r.errorsSeen.map((e) => `${e.kind} ${e.status} at ${e.atS} s after ${e.ms} ms: ${(e.error ?? "").slice(0, 90)}`))}`,
    },
    {
      row: `${what}: rows stranded in the source / paths or recordings lost`,
      target: "0 / 0",
      value: `${r.left.source} / ${lost}`,
      met: r.left.source === 0 && lost === 0,
      detail: `target holds ${r.left.target} nodes of the tree; ${recordings} new prompts recorded under load, each then served from the target`,
    },
    {
      row: `${what}: move duration; hits served while it ran`,
      target: "report",
      value: `${r.moveSeconds.toFixed(1)} s; ${d.hitsServed} hits`,
      met: null,
      detail: `answers that ended while it ran: hits ${d.hitsServed} (p50 / p99 ${ms(d.hitP50)} / ${ms(d.hitP99)}; before it ${ms(r.hitP50BeforeMove)} / ${ms(r.hitP99BeforeMove)}), disputed paths refused ${d.disputedRefused}, new prompts ${d.misses}, hits of another tree ${d.controlServed}, GET /healthz ${d.healthzAnswered}; longest hit in flight during the move ${ms(d.longestHitMs)}, of the other tree ${ms(d.longestControlMs)}, of GET /healthz ${ms(d.longestHealthzMs)} (${d.inFlight} requests overlapped it); the longest (s from the move's start, it ended at ${r.moveSeconds.toFixed(2)} s): ${r.slowest.join(", ")}`,
    },
  ];
}
