import { spawn, execFile, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, "../..");
const WRANGLER = join(ROOT, "node_modules/.bin/wrangler");
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
  /** Give the inspector a free port too, so that several instances can run at once. */
  freeInspector?: boolean;
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
  for (const binding of options.migrate ?? ["DB"]) {
    await run(WRANGLER, ["d1", "migrations", "apply", binding, "--local", "--persist-to", stateDir, ...configArgs], { cwd, env });
  }
  const port = await freePort();
  const args = ["dev", ...configArgs, "--ip", "127.0.0.1", "--port", String(port), "--persist-to", stateDir, "--log-level", options.logLevel ?? "warn", "--show-interactive-dev-session=false"];
  if (options.freeInspector) args.push("--inspector-port", String(await freePort()));
  for (const [k, v] of Object.entries(options.vars ?? {})) args.push("--var", `${k}:${v}`);
  const child: ChildProcess = spawn(WRANGLER, args, { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout?.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (output += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + (options.readyTimeoutMs ?? 60_000);
  for (;;) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited early:\n${output}`);
    try {
      const res = await fetch(`${url}/healthz`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      kill(child);
      throw new Error(`wrangler dev was not ready in time:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
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
    output: () => output,
    kill: () => kill(child),
    stop: async () => {
      kill(child);
      await new Promise((r) => setTimeout(r, 300));
      if (!options.stateDir) rmSync(stateDir, { recursive: true, force: true });
    },
  };
}

function kill(child: ChildProcess): void {
  if (child.pid === undefined || child.exitCode !== null) return;
  try {
    process.kill(-child.pid, "SIGTERM");
  } catch {
    child.kill("SIGTERM");
  }
}
