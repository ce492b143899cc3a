/**
 * `npm run bench -- --only hot-tree [--hot-rates 200,400,800,1600 --hot-miss-rates 50,100,200,400 --hot-seconds 4 --hot-before REF]`,
 * or on its own: `npx tsx bench/hot-tree.ts [same options]`.
 *
 * One tree under load, before and after a change, in one run: each side is a snapshot under its own
 * `wrangler dev` (the before side bundled from a git worktree of REF, by default the commit before cold hits
 * stopped going to the tree's object), with HOT_CACHE_TTL_MS=0 and COLO_CACHE_TTL_MS=0, so that every hit is
 * a cold lookup. At each offered rate (autocannon's overallRate) it sends recorded bodies of one tree (cold
 * hits), then new bodies of the same tree (misses, each recorded), and counts from the responses: fail-opens
 * (`muscle-mem-cache: bypass`), errors, the rate served, p50/p99, and the Durable Object calls and D1 queries
 * per request from `server-timing`. A side's limit is the first rate at which more than 1% of requests fail
 * open or err, or less than 90% of the offered rate is served. Locally every object shares workerd's one
 * thread with the Worker, so the local limit is the machine's; what carries to the platform is the object
 * calls per request: one tree's writer serves about 1,000 calls/s, so a tree sustains about 1,000 / (calls
 * per request) req/s of that kind (docs/performance.md, "A hot tree").
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import autocannon, { type Request } from "autocannon";
import { startScriptedModel } from "../tools/scripted-model";
import { HEADERS, log, prime } from "./http";
import { addStoreCounts, noStoreCounts, percentile, type StoreCounts } from "./load";
import { snapshotWorker, startSnapshotDev, type Snapshot } from "./snapshot";
import type { Row } from "./table";

const ROOT = resolve(import.meta.dirname, "..");
/** The subject of the commit that moved cold hits off the tree's object: the default before side is its parent. */
const CHANGE = "A hot tree's writer sees its misses only";
const FAIL_SHARE = 0.01;
const SERVED_SHARE = 0.9;

export interface HotTreeOptions {
  rates: number[];
  missRates: number[];
  seconds: number;
  /** A git ref for the before side (default: the parent of CHANGE's commit). */
  before?: string;
  /** Recorded bodies the cold hits cycle through. */
  bodies?: number;
}

/** One segment at one offered rate. */
export interface RateStep {
  offered: number;
  served: number;
  p50: number;
  p99: number;
  requests: number;
  failOpen: number;
  errors: number;
  outcomes: Record<string, number>;
  doPerRequest: number;
  d1PerRequest: number;
}

const body = (i: number | string) => ({ model: "hot-tree", messages: [{ role: "user", content: `hot tree question ${i}` }] });

/** Runs one segment at `rate` req/s overall; `fresh` sends a new body (a miss) each time, else cycles `bodies`. */
async function step(url: string, rate: number, seconds: number, bodies: unknown[], fresh: boolean): Promise<RateStep> {
  const outcomes: Record<string, number> = {};
  const store: StoreCounts = noStoreCounts();
  const latencies: number[] = [];
  let n = 0;
  const tag = crypto.randomUUID();
  const request = {
    method: "POST",
    path: "/v1/chat/completions",
    headers: { "content-type": "application/json", ...HEADERS },
    setupRequest: (req: Request) => ({ ...req, body: JSON.stringify(fresh ? body(`${tag}-${n++}`) : bodies[n++ % bodies.length]) }),
    onResponse: (status: number, _b: string, _c: unknown, headers: Record<string, string>) => {
      addStoreCounts(store, headers["server-timing"]);
      const outcome = headers["muscle-mem-cache"] ?? `status-${status}`;
      outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
    },
  };
  // Enough connections that the client is never what limits the rate (a response slower than 1/rate s waits on one).
  const connections = Math.min(256, Math.max(16, Math.ceil(rate / 10)));
  const tracker = autocannon({ url, connections, overallRate: rate, duration: seconds, requests: [request], timeout: 30 });
  tracker.on("response", (_client: unknown, status: number, _bytes: number, ms: number) => {
    if (status >= 200 && status < 300) latencies.push(ms);
  });
  const result = await tracker;
  latencies.sort((a, b) => a - b);
  const responses = Math.max(1, store.responses);
  return {
    offered: rate,
    served: result.requests.total / Math.max(0.001, result.duration),
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    requests: result.requests.total,
    failOpen: outcomes.bypass ?? 0,
    errors: result.errors + result.timeouts + result.non2xx,
    outcomes,
    doPerRequest: store.doCalls / responses,
    d1PerRequest: store.d1Queries / responses,
  };
}

/** The first step past the side's limit (too many fail-opens or errors, or too little served), or null. */
export function limitOf(steps: RateStep[]): RateStep | null {
  return steps.find((s) => (s.failOpen + s.errors) / Math.max(1, s.requests) > FAIL_SHARE || s.served < SERVED_SHARE * s.offered) ?? null;
}

/** A git worktree of `ref` next to no one's checkout, with this checkout's node_modules (for the bundle). */
function worktreeOf(ref: string): { dir: string; remove: () => void } {
  const dir = join(mkdtempSync(join(tmpdir(), "mm-hot-before-")), "tree");
  execFileSync("git", ["-C", ROOT, "worktree", "add", "-q", "--detach", dir, ref]);
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  return { dir, remove: () => execFileSync("git", ["-C", ROOT, "worktree", "remove", "--force", dir]) };
}

function defaultBefore(): string {
  const change = execFileSync("git", ["-C", ROOT, "log", "-1", "--format=%H", "--fixed-strings", `--grep=${CHANGE}`])
    .toString()
    .trim();
  if (!change) throw new Error(`hot-tree: no commit "${CHANGE}…" in this checkout; pass --hot-before REF`);
  return `${change}^`;
}

const line = (side: string, kind: string, s: RateStep) =>
  `${side} ${kind} @${s.offered}/s: served ${s.served.toFixed(0)}/s, p50 ${s.p50.toFixed(1)} ms, p99 ${s.p99.toFixed(1)} ms, fail-open ${s.failOpen}, errors ${s.errors} of ${s.requests}, DO ${s.doPerRequest.toFixed(2)}/req, D1 ${s.d1PerRequest.toFixed(2)}/req ${JSON.stringify(s.outcomes)}`;

/** The hot-tree rows: per side and kind, the limit and the object calls per request (see the file's comment). */
export async function hotTreeRows(after: Snapshot, opts: HotTreeOptions): Promise<{ rows: Row[]; results: Record<string, unknown> }> {
  const ref = opts.before ?? defaultBefore();
  const tree = worktreeOf(ref);
  const model = await startScriptedModel({ script: () => ({ role: "assistant", content: "The hot tree's answer." }) });
  const vars = { UPSTREAM_BASE_URL: model.url, HOT_CACHE_TTL_MS: "0", COLO_CACHE_TTL_MS: "0" };
  const recorded = Array.from({ length: opts.bodies ?? 50 }, (_, i) => body(i));
  const sides: Array<{ name: string; snapshot: Snapshot; ownSnapshot: boolean }> = [
    { name: "before", snapshot: await snapshotWorker(undefined, tree.dir), ownSnapshot: true },
    { name: "after", snapshot: after, ownSnapshot: false },
  ];
  const results: Record<string, { hits: RateStep[]; misses: RateStep[] }> = {};
  try {
    const devs = await Promise.all(sides.map((s) => startSnapshotDev(s.snapshot, vars)));
    try {
      for (const [i, side] of sides.entries()) {
        await prime(devs[i].url, recorded);
        results[side.name] = { hits: [], misses: [] };
      }
      // Rate by rate, the two sides alternate (before after, then after before), so that drift hits both alike.
      for (const [kind, rates] of [
        ["hits", opts.rates],
        ["misses", opts.missRates],
      ] as const) {
        for (const [r, rate] of rates.entries()) {
          const order = r % 2 === 0 ? [0, 1] : [1, 0];
          for (const i of order) {
            const s = await step(devs[i].url, rate, opts.seconds, recorded, kind === "misses");
            results[sides[i].name][kind].push(s);
            log(line(sides[i].name, kind === "hits" ? "cold hits" : "misses", s));
          }
        }
      }
    } finally {
      for (const dev of devs) await dev.stop();
    }
  } finally {
    for (const s of sides) if (s.ownSnapshot) s.snapshot.remove();
    tree.remove();
    await model.close();
  }
  const rows: Row[] = [];
  for (const [kind, label] of [
    ["hits", "cold hits"],
    ["misses", "misses"],
  ] as const) {
    const [before, after2] = [results.before[kind], results.after[kind]];
    const limit = (steps: RateStep[]) => {
      const l = limitOf(steps);
      return l
        ? `limit at ${l.offered}/s (served ${l.served.toFixed(0)}/s, fail-open ${l.failOpen}, errors ${l.errors})`
        : `no limit up to ${steps.at(-1)?.offered}/s`;
    };
    const calls = (steps: RateStep[]) => Math.max(...steps.map((s) => s.doPerRequest));
    // The most a side served with fewer than 1% of its requests failed open or erred, and its object calls per second then.
    const sustained = (steps: RateStep[]) => {
      const ok = steps.filter((s) => (s.failOpen + s.errors) / Math.max(1, s.requests) <= FAIL_SHARE);
      const best = ok.reduce<RateStep | null>((a, s) => (a === null || s.served > a.served ? s : a), null);
      return best
        ? `sustained ${best.served.toFixed(0)}/s (offered ${best.offered}/s, ${(best.served * best.doPerRequest).toFixed(0)} object calls/s)`
        : "none sustained";
    };
    rows.push({
      row: `hot tree, ${label}: Durable Object calls per request (before → after)`,
      target: "report",
      value: `${calls(before).toFixed(2)} → ${calls(after2).toFixed(2)}`,
      met: null,
      detail: `before: ${sustained(before)}, ${limit(before)}; after: ${sustained(after2)}, ${limit(after2)}; D1 per request ${before[0]?.d1PerRequest.toFixed(2)} → ${after2[0]?.d1PerRequest.toFixed(2)}`,
    });
  }
  return { rows, results: { before: ref, ...results } };
}

/** The command-line options of the section (bench/run.ts takes them too). */
export const hotTreeArgs = {
  "hot-rates": { type: "string", default: "200,400,800,1600" },
  "hot-miss-rates": { type: "string", default: "50,100,200,400" },
  "hot-seconds": { type: "string", default: "4" },
  "hot-before": { type: "string" },
} as const;

export function hotTreeOptions(values: { "hot-rates"?: string; "hot-miss-rates"?: string; "hot-seconds"?: string; "hot-before"?: string }): HotTreeOptions {
  const list = (s: string | undefined) => (s ?? "").split(",").filter(Boolean).map(Number);
  return {
    rates: list(values["hot-rates"]),
    missRates: list(values["hot-miss-rates"]),
    seconds: Number(values["hot-seconds"] ?? 4),
    before: values["hot-before"],
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { parseArgs } = await import("node:util");
  const { values } = parseArgs({ options: hotTreeArgs });
  const snapshot = await snapshotWorker();
  try {
    const out = await hotTreeRows(snapshot, hotTreeOptions(values));
    console.log(JSON.stringify(out.rows, null, 2));
  } finally {
    snapshot.remove();
  }
}
