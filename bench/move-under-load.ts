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
import { ask, importLines, judge, seedTree, treeIdOf, type Probe } from "./scale-seed";
import { moveTable, type Tick, tickStats } from "./move-report";
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
    const stats = tickStats(ticks, moveStart, moveEnd);
    if (stats.errorsSeen.length) log("move: errors", stats.errorsSeen, "wrangler dev's output, last 4000 characters:", dev.output().slice(-4000));
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
      ...stats,
    };
    return { rows: moveTable(results, recorded.length), results };
  } finally {
    await dev.stop();
    build.remove();
    await model.close();
  }
}
