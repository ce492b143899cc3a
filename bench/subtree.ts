/**
 * `npx tsx bench/subtree.ts [--conversations 125] [--runs 30]`: the dashboard's Expand all on a
 * ~500-node tree, side by side: one `GET /api/trees/:treeId/subtree` request against the
 * level-by-level walk of `GET /children` it replaced (six at a time, as the dashboard did).
 * The tree is seeded through `POST /api/import` on its own `wrangler dev` (local D1); the
 * issue's target is the subtree request under 300 ms locally. A measurement, never a test.
 */
import { parseArgs } from "node:util";
import { startWranglerDev } from "../test/support/wrangler-dev";
import { importLines, seedTree, treeIdOf } from "./scale-seed";

const KEY = "Bearer sk-bench-subtree";
const NAMESPACE = "bench-subtree";
const { values: args } = parseArgs({ options: { conversations: { type: "string", default: "125" }, runs: { type: "string", default: "30" } } });

interface Summary {
  hash: string;
  child_count: number;
}

async function get<T>(url: string): Promise<T> {
  const res = await fetch(url, { headers: { authorization: KEY } });
  if (!res.ok) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** The old Expand all: every level's children, six requests at a time, 50 a page. */
async function walkChildren(base: string, treeId: string): Promise<{ nodes: number; requests: number }> {
  let level: Array<string | null> = [null];
  let nodes = 0;
  let requests = 0;
  while (level.length > 0) {
    const next: string[] = [];
    for (let i = 0; i < level.length; i += 6) {
      await Promise.all(
        level.slice(i, i + 6).map(async (parent) => {
          let cursor: string | null = null;
          do {
            const q = `${parent ? `&parent=${parent}` : ""}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
            const page: { data: Summary[]; next_cursor: string | null } = await get(`${base}/trees/${treeId}/children?limit=50${q}`);
            requests++;
            nodes += page.data.length;
            next.push(...page.data.filter((d) => d.child_count > 0).map((d) => d.hash));
            cursor = page.next_cursor;
          } while (cursor);
        }),
      );
    }
    level = next;
  }
  return { nodes, requests };
}

async function timed<T>(f: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t0 = performance.now();
  const value = await f();
  return { ms: performance.now() - t0, value };
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];

const dev = await startWranglerDev({ vars: { LOG_LEVEL: "warn", IMPORT_TENANTS: "*" }, logLevel: "error" });
try {
  const seed = seedTree("bench-subtree-model", Number(args.conversations), { tag: "subtree" });
  await importLines(dev.url, KEY, NAMESPACE, seed.lines);
  const treeId = await treeIdOf(dev.url, KEY, NAMESPACE);
  const base = `${dev.url}/api`;
  const runs = Number(args.runs);
  const one: number[] = [];
  const walk: number[] = [];
  let nodes = 0;
  let truncated = false;
  let walked = { nodes: 0, requests: 0 };
  for (let i = 0; i < runs + 3; i++) {
    const s = await timed(() => get<{ data: Summary[]; truncated: boolean }>(`${base}/trees/${treeId}/subtree?limit=2000`));
    const w = await timed(() => walkChildren(base, treeId));
    if (i < 3) continue; // warm-up
    one.push(s.ms);
    walk.push(w.ms);
    nodes = s.value.data.length;
    truncated = s.value.truncated;
    walked = w.value;
  }
  if (walked.nodes !== nodes) throw new Error(`the subtree has ${nodes} nodes, the walk ${walked.nodes}`);
  console.log(`expand all of a ${nodes}-node tree (seeded ${seed.nodes}), ${runs} runs each, local wrangler dev:`);
  console.log(`| way | requests | median ms | p95 ms |\n|---|---:|---:|---:|`);
  console.log(`| GET /subtree (one request${truncated ? ", truncated" : ""}) | 1 | ${pct(one, 50).toFixed(1)} | ${pct(one, 95).toFixed(1)} |`);
  console.log(`| GET /children level by level (6 at a time) | ${walked.requests} | ${pct(walk, 50).toFixed(1)} | ${pct(walk, 95).toFixed(1)} |`);
} finally {
  await dev.stop();
}
