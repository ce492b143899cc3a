import { spawn, execFile, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import { copyMigratedState } from "./migrated-state";

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, "../..");
const WRANGLER = join(ROOT, "node_modules/.bin/wrangler");
const TSX = join(ROOT, "node_modules/.bin/tsx");
const WITHOUT_INSPECTOR = join(ROOT, "test/support/dev-without-inspector.ts");
/** Tries of one `sql()` call while the running Worker holds its database's write lock. */
const SQL_ATTEMPTS = 5;

/** A free loopback port. */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

export interface WranglerDev {
  /** e.g. http://127.0.0.1:8787 */
  url: string;
  /** The local state folder (D1 and Durable Objects). */
  stateDir: string;
  /** The process group leader (wrangler), for CPU accounting. */
  pid: number | undefined;
  /** Runs SQL against a local D1 database (default `DB`; JSON rows). */
  sql: (query: string, binding?: string) => Promise<Array<Record<string, unknown>>>;
  /** Stops the process group and removes a state folder it created. */
  stop: () => Promise<void>;
  /** Stops the process group at once (for a signal handler); the state folder stays. */
  kill: () => void;
  /** Everything wrangler dev printed so far. */
  output: () => string;
}

export interface WranglerDevOptions {
  vars?: Record<string, string>;
  /** Reuse a state folder (default: a new temporary one, removed on stop). */
  stateDir?: string;
  readyTimeoutMs?: number;
  /** wrangler's --log-level (default "warn"); "info" shows the Worker's request log lines. */
  logLevel?: "debug" | "info" | "log" | "warn" | "error";
  /** A wrangler.toml other than the repo's (a bundled snapshot), run from its own folder. */
  config?: string;
  /** The D1 bindings to migrate before starting (default `["DB"]`). */
  migrate?: readonly string[];
  /**
   * Give the inspector a free port too (default true), so that several instances can start at once:
   * wrangler's own default probes 9229 and up, and two starting together can pick the same port.
   */
  freeInspector?: boolean;
  /** The inspector's port (for a CPU profile over the DevTools protocol); overrides freeInspector. */
  inspectorPort?: number;
  /**
   * False: run without the DevTools inspector, through wrangler's API (test/support/dev-without-inspector.ts),
   * for benchmarks that separate the Worker's cost from the inspector relay the CLI always attaches.
   */
  inspector?: false;
}

/** The environment the house rules ask for around wrangler: no metrics, no network, logs and config in `dir`. */
export function quietEnv(dir: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    CI: "true",
    WRANGLER_SEND_METRICS: "false",
    CLOUDFLARE_CF_FETCH_ENABLED: "false",
    WRANGLER_LOG_PATH: join(dir, "logs"),
    XDG_CONFIG_HOME: join(dir, "config"),
  };
}

/**
 * Starts `wrangler dev` on a free loopback port with its own state folder,
 * after applying the D1 migrations there, and waits until it is ready.
 */
export async function startWranglerDev(options: WranglerDevOptions = {}): Promise<WranglerDev> {
  const stateDir = options.stateDir ?? mkdtempSync(join(tmpdir(), "mm-dev-"));
  const env = quietEnv(stateDir);
  const cwd = options.config ? dirname(options.config) : ROOT;
  const configArgs = options.config ? ["--config", options.config] : [];
  const migrate = async (dir: string) => {
    for (const binding of options.migrate ?? ["DB"]) {
      await run(WRANGLER, ["d1", "migrations", "apply", binding, "--local", "--persist-to", dir, ...configArgs], { cwd, env });
    }
  };
  // A new state folder of the repo's own Worker starts as a copy of one migrated once (migrated-state.ts).
  if (options.stateDir || options.config) await migrate(stateDir);
  else await copyMigratedState(ROOT, options.migrate ?? ["DB"], stateDir, migrate);
  const { child, port, output } = await launch(options, configArgs, stateDir, cwd, env);
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    stateDir,
    pid: child.pid,
    sql: async (query, binding = "DB") => {
      const args = ["d1", "execute", binding, "--local", "--persist-to", stateDir, ...configArgs, "--json", "--command", query];
      for (let attempt = 1; ; attempt++) {
        try {
          const { stdout } = await run(WRANGLER, args, { cwd, env, maxBuffer: 256 * 1024 * 1024 });
          const parsed = JSON.parse(stdout) as Array<{ results: Array<Record<string, unknown>> }>;
          return parsed.flatMap((r) => r.results);
        } catch (error) {
          // A second process opens the running Worker's SQLite file: while the Worker writes in the
          // background (hit tallies, recordings, learning), it can get SQLITE_BUSY. Read again.
          if (attempt >= SQL_ATTEMPTS || !/database is locked|SQLITE_BUSY/.test(String(error))) throw error;
          await new Promise((r) => setTimeout(r, 300 * attempt));
        }
      }
    },
    output,
    kill: () => kill(child),
    stop: async () => {
      kill(child);
      await new Promise((r) => setTimeout(r, 300));
      if (!options.stateDir) rmSync(stateDir, { recursive: true, force: true });
    },
  };
}

/** Tries of one start when another process took a chosen port between freePort() and wrangler's bind. */
const START_ATTEMPTS = 3;

/** wrangler dev exits with one of these when its port or inspector port was taken first. */
const PORT_TAKEN = /EADDRINUSE|address already in use/i;

interface Launched {
  child: ChildProcess;
  port: number;
  output: () => string;
}

/** Spawns `wrangler dev` on free ports and waits for /healthz; starts again on new ports if a port was taken. */
async function launch(options: WranglerDevOptions, configArgs: string[], stateDir: string, cwd: string, env: NodeJS.ProcessEnv): Promise<Launched> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const [command, args] =
      options.inspector === false ? [TSX, withoutInspectorArgs(options, stateDir, port)] : [WRANGLER, await cliArgs(options, configArgs, stateDir, port)];
    const child: ChildProcess = spawn(command, args, { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout?.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr?.on("data", (d: Buffer) => (output += d.toString()));
    const ready = await untilHealthy(child, `http://127.0.0.1:${port}`, options.readyTimeoutMs ?? 60_000, () => output);
    if (ready) return { child, port, output: () => output };
    kill(child);
    if (attempt >= START_ATTEMPTS || !PORT_TAKEN.test(output))
      throw new Error(`wrangler dev ${child.exitCode === null ? "was not ready in time" : "exited early"}:\n${output}`);
  }
}

/** The `wrangler dev` command line for one start. */
async function cliArgs(options: WranglerDevOptions, configArgs: string[], stateDir: string, port: number): Promise<string[]> {
  const args = [
    "dev",
    ...configArgs,
    "--ip",
    "127.0.0.1",
    "--port",
    String(port),
    "--persist-to",
    stateDir,
    "--log-level",
    options.logLevel ?? "warn",
    "--show-interactive-dev-session=false",
  ];
  if (options.inspectorPort !== undefined) args.push("--inspector-port", String(options.inspectorPort));
  else if (options.freeInspector !== false) args.push("--inspector-port", String(await freePort()));
  for (const [k, v] of Object.entries(options.vars ?? {})) args.push("--var", `${k}:${v}`);
  return args;
}

/** The arguments of test/support/dev-without-inspector.ts for one start (wrangler's API, no inspector). */
function withoutInspectorArgs(options: WranglerDevOptions, stateDir: string, port: number): string[] {
  return [
    WITHOUT_INSPECTOR,
    options.config ?? join(ROOT, "wrangler.toml"),
    String(port),
    stateDir,
    options.logLevel ?? "warn",
    JSON.stringify(options.vars ?? {}),
  ];
}

/** Polls `${url}/healthz` until it answers 200 (true), or the process exits or the deadline passes (false). */
async function untilHealthy(child: ChildProcess, url: string, timeoutMs: number, output: () => string): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) return false;
    // wrangler said a port it was given is taken: start again on new ones rather than trust /healthz there.
    if (PORT_TAKEN.test(output())) return false;
    try {
      const res = await fetch(`${url}/healthz`);
      if (res.ok) return true;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 200));
  }
}

function kill(child: ChildProcess): void {
  if (child.pid === undefined || child.exitCode !== null) return;
  try {
    process.kill(-child.pid, "SIGTERM");
  } catch {
    child.kill("SIGTERM");
  }
}
