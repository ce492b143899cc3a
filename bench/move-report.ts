/**
 * What bench/move-under-load.ts measured: each request's tick, the ticks summed up around the move
 * (under load, while it ran, before it), and the rows bench/scale.ts prints.
 */
import { percentile } from "./load";
import type { Row } from "./table";

/** One request of the load: when it started and ended (performance.now()), what it was and how it was answered. */
export interface Tick {
  start: number;
  end: number;
  kind: "hit" | "miss" | "control" | "healthz";
  verdict: "right" | "wrong" | "miss" | "error";
  status: number;
  error?: string;
}

/** The ticks summed up: under load, while the move ran (`moveStart`..`moveEnd`), and the hits before it. */
export function tickStats(ticks: readonly Tick[], moveStart: number, moveEnd: number) {
  const during = ticks.filter((t) => t.end >= moveStart && t.end <= moveEnd);
  const overlapping = ticks.filter((t) => t.start < moveEnd && t.end > moveStart);
  const longest = (kind: Tick["kind"]) => Math.max(0, ...overlapping.filter((t) => t.kind === kind).map((t) => t.end - t.start));
  const count = (ts: readonly Tick[], pick: (t: Tick) => boolean) => ts.filter(pick).length;
  const hitMs = (ts: readonly Tick[]) =>
    ts
      .filter((t) => t.kind === "hit")
      .map((t) => t.end - t.start)
      .sort((a, b) => a - b);
  const beforeMove = hitMs(ticks.filter((t) => t.end < moveStart));
  const errorsSeen = ticks
    .filter((t) => t.verdict === "error")
    .slice(0, 5)
    .map((t) => ({ kind: t.kind, status: t.status, atS: ((t.start - moveStart) / 1000).toFixed(1), ms: Math.round(t.end - t.start), error: t.error }));
  const inMove = hitMs(during);
  // Where the longest waits of the move fell (s from its start): a stall shows as requests of every kind starting before it and ending together.
  const slowest = [...overlapping]
    .sort((a, b) => b.end - b.start - (a.end - a.start))
    .slice(0, 6)
    .map((t) => `${t.kind} ${((t.start - moveStart) / 1000).toFixed(2)}-${((t.end - moveStart) / 1000).toFixed(2)} s`);
  return {
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
}

export type MoveResults = {
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

export function moveTable(r: MoveResults, recordings: number): Row[] {
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
