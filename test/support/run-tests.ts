import { spawn, type ChildProcess } from "node:child_process";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";

/**
 * `npm test`'s vitest step: two lanes of `vitest run` side by side. One lane starts with the node project
 * (wrangler dev, Chromium, SDK processes: much of it waiting on I/O), then the unit project (plain Node, quick);
 * the other starts on the Worker files. The Worker and sharded projects' files are cut into WORKERD_SHARDS
 * slices (vitest's `--shard`: by a hash of each file's path, so a slice is the same from run to run), and each
 * lane, once its own runs are done, takes the next slice not yet taken, until none is left: the lanes finish
 * within about one slice of each other however fast this machine runs either kind. Each run keeps its files one
 * after another; a 2-core machine runs one file of each lane at a time.
 * With arguments (e.g. a file filter), the lanes are the node and unit projects, and the Worker projects, each
 * given the arguments; a run with no matching file passes.
 *
 *   tsx test/support/run-tests.ts [vitest args…]
 */
const ROOT = resolve(import.meta.dirname, "../..");
const VITEST = join(ROOT, "node_modules/.bin/vitest");
/**
 * How many slices the Worker files (test/worker and test/sharded, ~220 files, ~11 min of one lane's time on
 * 2 cores) are cut into: enough that the lanes end close together, few enough that vitest's own start (~5 s a
 * run) stays small beside a slice's minute and a half.
 */
const WORKERD_SHARDS = 8;
const extra = process.argv.slice(2);
const WORKERD = ["--project", "workers", "--project", "sharded"];

interface Lane {
  name: string;
  /** The lane's own runs, in order, before it takes slices from the shared queue. */
  runs: string[][];
}

/** The Worker files' slices, taken in order by whichever lane is free first (empty with arguments). */
const queue: string[][] = extra.length
  ? []
  : Array.from({ length: WORKERD_SHARDS }, (_, i) => [...WORKERD, "test/worker/", "test/sharded/", `--shard=${i + 1}/${WORKERD_SHARDS}`]);
const LANES: Lane[] = extra.length
  ? [
      { name: "node and unit", runs: [["--project", "node", "--project", "unit", ...extra]] },
      { name: "workers+sharded", runs: [[...WORKERD, ...extra]] },
    ]
  : [
      {
        name: "node, unit, then Worker slices",
        runs: [
          ["--project", "node"],
          ["--project", "unit"],
        ],
      },
      { name: "Worker slices", runs: [] },
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

/** The files and tests every run reported (vitest's "Test Files … (n)" and "Tests … (n)" lines), summed. */
const totals = { files: 0, tests: 0 };
const TOTAL = /^\s*(Test Files|Tests)\s+.*\((\d+)\)\s*$/;

/** Keeps a line that names a failure, and adds a summary line's count to the totals. */
function keepLine(lane: string, line: string): void {
  const plain = line.replace(ANSI, "");
  const total = TOTAL.exec(plain);
  if (total) totals[total[1] === "Tests" ? "tests" : "files"] += Number(total[2]);
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
      keepLine(lane, line);
      process.stdout.write(`${line}\n`);
    });
  if (child.stderr)
    createInterface({ input: child.stderr }).on("line", (line) => {
      keepLine(lane, line);
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

/**
 * Runs a lane's own runs one after another, then slices from the queue until it is empty (all of them, even
 * after a failure); its exit code is 0 if every run passed.
 */
async function lane({ name, runs }: Lane): Promise<Finished> {
  const began = Date.now();
  let code = 0;
  const own = [...runs];
  for (let args = own.shift() ?? queue.shift(); args; args = own.shift() ?? queue.shift()) {
    if (stopping) return { name, code: 1, seconds: (Date.now() - began) / 1000 };
    const { child, done } = start(args, name);
    running.add(child);
    const exit = await done;
    running.delete(child);
    if (exit !== 0) code = exit;
  }
  return { name, code, seconds: (Date.now() - began) / 1000 };
}

const finished = await Promise.all(LANES.map(lane));
for (const f of finished) {
  console.log(`vitest lane ${f.name}: ${f.code === 0 ? "passed" : `FAILED (exit ${f.code})`} in ${f.seconds.toFixed(0)} s`);
  for (const line of f.code === 0 ? [] : (failures.get(f.name) ?? [])) console.log(`  ${line}`);
}
console.log(`vitest: ${totals.files} test files, ${totals.tests} tests in all`);
process.exit(finished.every((f) => f.code === 0) ? 0 : 1);
