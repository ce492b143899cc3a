import { spawn, type ChildProcess } from "node:child_process";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";

/**
 * `npm test`'s vitest step: two `vitest run`s side by side, one for the node project (wrangler dev,
 * Chromium, SDK processes: mostly waiting on I/O) and one for the Worker projects (workers, sharded:
 * mostly CPU). Each keeps its files one after another as before; the two overlap, so a 2-core machine
 * runs one file of each at a time instead of every file in turn. Nothing runs beside a file of its own
 * kind that did not before. Arguments go to both runs (e.g. a file filter; a run with no matching file
 * passes).
 *
 *   tsx test/support/run-tests.ts [vitest args…]
 */
const ROOT = resolve(import.meta.dirname, "../..");
const VITEST = join(ROOT, "node_modules/.bin/vitest");
const RUNS = [
  { name: "node", projects: ["node"] },
  { name: "workers+sharded", projects: ["workers", "sharded"] },
];

interface Finished {
  name: string;
  code: number;
  seconds: number;
}

/** Starts one vitest run and copies its output line by line, so the two runs' lines never mix mid-line. */
function start(name: string, projects: string[], extra: string[]): { child: ChildProcess; done: Promise<Finished> } {
  const args = ["run", ...projects.flatMap((p) => ["--project", p]), "--passWithNoTests", ...extra];
  const env = { ...process.env, ...(process.stdout.isTTY ? { FORCE_COLOR: "1" } : {}) };
  const began = Date.now();
  const child = spawn(VITEST, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  if (child.stdout) createInterface({ input: child.stdout }).on("line", (line) => process.stdout.write(`${line}\n`));
  if (child.stderr) createInterface({ input: child.stderr }).on("line", (line) => process.stderr.write(`${line}\n`));
  const done = new Promise<Finished>((resolveDone) => {
    child.on("error", (error) => {
      process.stderr.write(`vitest (${name}) did not start: ${String(error)}\n`);
      resolveDone({ name, code: 1, seconds: 0 });
    });
    child.on("close", (code, signal) => resolveDone({ name, code: code ?? (signal ? 1 : 0), seconds: (Date.now() - began) / 1000 }));
  });
  return { child, done };
}

const runs = RUNS.map((r) => start(r.name, r.projects, process.argv.slice(2)));
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    for (const { child } of runs) child.kill(signal);
  });
}
const finished = await Promise.all(runs.map((r) => r.done));
for (const f of finished) console.log(`vitest ${f.name}: ${f.code === 0 ? "passed" : `FAILED (exit ${f.code})`} in ${f.seconds.toFixed(0)} s`);
process.exit(finished.every((f) => f.code === 0) ? 0 : 1);
