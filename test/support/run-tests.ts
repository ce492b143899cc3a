import { spawn, type ChildProcess } from "node:child_process";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";

/**
 * `npm test`'s vitest step: two lanes of `vitest run` side by side. One lane runs the node project (wrangler
 * dev, Chromium, SDK processes: much of it waiting on I/O), then test/unit; the other runs test/worker and the
 * sharded project (workerd: mostly CPU). Each run keeps its files one after another as before; the lanes
 * overlap, so a 2-core machine runs one file of each at a time instead of every file in turn, and test/unit
 * goes where it evens the two lanes out. Nothing runs beside a file of its own kind that did not before.
 * With arguments (e.g. a file filter), the lanes are the node project and the Worker projects, each given the
 * arguments; a run with no matching file passes.
 *
 *   tsx test/support/run-tests.ts [vitest args…]
 */
const ROOT = resolve(import.meta.dirname, "../..");
const VITEST = join(ROOT, "node_modules/.bin/vitest");
const extra = process.argv.slice(2);
const LANES: Array<{ name: string; runs: string[][] }> = extra.length
  ? [
      { name: "node", runs: [["--project", "node", ...extra]] },
      { name: "workers+sharded", runs: [["--project", "workers", "--project", "sharded", ...extra]] },
    ]
  : [
      {
        name: "node, then test/unit",
        runs: [
          ["--project", "node"],
          ["--project", "workers", "test/unit/"],
        ],
      },
      { name: "test/worker and sharded", runs: [["--project", "workers", "--project", "sharded", "test/worker/", "test/sharded/"]] },
    ];

interface Finished {
  name: string;
  code: number;
  seconds: number;
}

/** The lines that name a failed test or file, kept per lane and printed again at the end (CI shows a log's tail). */
const failures = new Map<string, string[]>();
// biome-ignore lint/suspicious/noControlCharactersInRegex: vitest colours its output with ANSI escapes
const ANSI = /\u001b\[[0-9;]*m/g;
const FAILURE = /^\s*(FAIL\s|×\s|❯ .*\(\d+ tests? \|\s*\d+ failed|Vitest caught \d+ unhandled|(Test Files|Tests)\s+.*failed)|Unhandled (Rejection|Error)/;

function keepFailure(lane: string, line: string): void {
  const plain = line.replace(ANSI, "");
  if (!FAILURE.test(plain)) return;
  const kept = failures.get(lane) ?? [];
  if (kept.length < 40 && !kept.includes(plain.trim())) kept.push(plain.trim());
  failures.set(lane, kept);
}

/** Starts one vitest run and copies its output line by line, so the two lanes' lines never mix mid-line. */
function start(args: string[], lane: string): { child: ChildProcess; done: Promise<number> } {
  const env = { ...process.env, ...(process.stdout.isTTY ? { FORCE_COLOR: "1" } : {}) };
  const child = spawn(VITEST, ["run", "--passWithNoTests", ...args], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  if (child.stdout)
    createInterface({ input: child.stdout }).on("line", (line) => {
      keepFailure(lane, line);
      process.stdout.write(`${line}\n`);
    });
  if (child.stderr)
    createInterface({ input: child.stderr }).on("line", (line) => {
      keepFailure(lane, line);
      process.stderr.write(`${line}\n`);
    });
  const done = new Promise<number>((resolveDone) => {
    child.on("error", (error) => {
      process.stderr.write(`vitest ${args.join(" ")} did not start: ${String(error)}\n`);
      resolveDone(1);
    });
    child.on("close", (code, signal) => resolveDone(code ?? (signal ? 1 : 0)));
  });
  return { child, done };
}

const running = new Set<ChildProcess>();
let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    stopping = true;
    for (const child of running) child.kill(signal);
  });
}

/** Runs a lane's vitest runs one after another (all of them, even after a failure); true if all passed. */
async function lane(name: string, runs: string[][]): Promise<Finished> {
  const began = Date.now();
  let code = 0;
  for (const args of runs) {
    if (stopping) return { name, code: 1, seconds: (Date.now() - began) / 1000 };
    const { child, done } = start(args, name);
    running.add(child);
    const exit = await done;
    running.delete(child);
    if (exit !== 0) code = exit;
  }
  return { name, code, seconds: (Date.now() - began) / 1000 };
}

const finished = await Promise.all(LANES.map((l) => lane(l.name, l.runs)));
for (const f of finished) {
  console.log(`vitest lane ${f.name}: ${f.code === 0 ? "passed" : `FAILED (exit ${f.code})`} in ${f.seconds.toFixed(0)} s`);
  for (const line of f.code === 0 ? [] : (failures.get(f.name) ?? [])) console.log(`  ${line}`);
}
process.exit(finished.every((f) => f.code === 0) ? 0 : 1);
