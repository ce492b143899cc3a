/**
 * What one piece of the per-request work outside the cache domain costs in workerd:
 * `npx tsx bench/worker-ops.ts [rounds] [ops per request]`. Starts bench/floors/ops.ts under `wrangler dev`
 * twice, with the CLI's DevTools inspector (as bench/profile-split.ts and every `npm start` run) and without it
 * (wrangler's API, test/support/dev-without-inspector.ts), and reads workerd's /proc CPU around 20 requests per
 * op, each running the op `ops per request` times (a tenth as many for `console-line`): microseconds of CPU per
 * op, the `none` row being the loop and the request's own share. Rounds interleave the ops.
 */
import { resolve } from "node:path";
import { startWranglerDev } from "../test/support/wrangler-dev";
import { cpuOf } from "./proc-cpu";

const ROUNDS = Number(process.argv[2] ?? 3);
const PER_REQUEST = Number(process.argv[3] ?? 2000);
const REQUESTS = 20;
/** `MM_OPS=none,headers-copy`: only these ops. */
const OPS = (
  process.env.MM_OPS ?? "none,context-two,context-one,signal-any,signal-listener,timer,headers-copy,headers-copy-delete,request-id,request-line,console-line"
).split(",");
const config = resolve(import.meta.dirname, "floors/wrangler.ops.toml");

async function measure(inspector: boolean): Promise<Record<string, number[]>> {
  const dev = await startWranglerDev({ config, migrate: [], logLevel: "error", ...(inspector ? {} : { inspector: false as const }) });
  const out: Record<string, number[]> = {};
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const op of OPS) {
        const n = op === "console-line" ? PER_REQUEST / 10 : PER_REQUEST;
        const before = cpuOf(dev.pid).workerd ?? 0;
        for (let r = 0; r < REQUESTS; r++) await (await fetch(`${dev.url}/${op}?n=${n}`)).text();
        const after = cpuOf(dev.pid).workerd ?? 0;
        (out[op] ??= []).push(((after - before) * 1e6) / (REQUESTS * n));
      }
    }
  } finally {
    await dev.stop();
  }
  return out;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const withInspector = await measure(true);
const withoutInspector = await measure(false);
console.log(`workerd CPU per op, µs (median of ${ROUNDS} rounds; /proc ticks are 10 ms, so rows under ~1 µs are noise)`);
console.table(
  OPS.map((op) => ({
    op,
    "inspector on": Number(median(withInspector[op]).toFixed(2)),
    "inspector off": Number(median(withoutInspector[op]).toFixed(2)),
  })),
);
process.exit(0);
