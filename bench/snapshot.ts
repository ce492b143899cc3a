import { execFile, spawn, type ChildProcess } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { freePort, type WranglerDev } from "../test/support/wrangler-dev";

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, "..");
const WRANGLER = join(ROOT, "node_modules/.bin/wrangler");

function quietEnv(dir: string): NodeJS.ProcessEnv {
  return { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_LOG_PATH: join(dir, "logs"), XDG_CONFIG_HOME: join(dir, "config") };
}

/**
 * Bundles the Worker once into a temporary folder with its own wrangler.toml,
 * migrations, .dev.vars and dashboard assets. `wrangler dev` watches its sources; on a checkout
 * that several people edit, a snapshot keeps a run measuring one build.
 */
export async function snapshotWorker(): Promise<{ dir: string; config: string; remove: () => void }> {
  const dir = mkdtempSync(join(tmpdir(), "mm-bench-"));
  const env = quietEnv(dir);
  await run(WRANGLER, ["deploy", "--dry-run", "--outdir", join(dir, "dist")], { cwd: ROOT, env, maxBuffer: 64 * 1024 * 1024 });
  cpSync(join(ROOT, "migrations"), join(dir, "migrations"), { recursive: true });
  if (existsSync(join(ROOT, ".dev.vars"))) cpSync(join(ROOT, ".dev.vars"), join(dir, ".dev.vars"));
  // The dashboard too: wrangler dev restarts the Worker when its assets folder changes.
  cpSync(join(ROOT, "dashboard"), join(dir, "dashboard"), { recursive: true });
  const toml = readFileSync(join(ROOT, "wrangler.toml"), "utf8").replace(/^main = .*$/m, 'main = "dist/index.js"');
  const config = join(dir, "wrangler.toml");
  writeFileSync(config, toml);
  return { dir, config, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Starts `wrangler dev` on the snapshot, with fresh local state, and waits for /healthz. */
export async function startSnapshotDev(snapshot: { dir: string; config: string }, vars: Record<string, string>): Promise<WranglerDev> {
  const stateDir = mkdtempSync(join(tmpdir(), "mm-bench-state-"));
  const env = quietEnv(stateDir);
  const cwd = snapshot.dir;
  await run(WRANGLER, ["d1", "migrations", "apply", "DB", "--local", "--config", snapshot.config, "--persist-to", stateDir], { cwd, env });
  const port = await freePort();
  const args = ["dev", "--config", snapshot.config, "--ip", "127.0.0.1", "--port", String(port), "--persist-to", stateDir, "--log-level", "error", "--show-interactive-dev-session=false"];
  for (const [k, v] of Object.entries(vars)) args.push("--var", `${k}:${v}`);
  const child: ChildProcess = spawn(WRANGLER, args, { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout?.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (output += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  const kill = () => {
    if (child.pid !== undefined && child.exitCode === null) process.kill(-child.pid, "SIGTERM");
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited early:\n${output}`);
    const ok = await fetch(`${url}/healthz`).then((r) => r.ok, () => false);
    if (ok) break;
    if (Date.now() > deadline) {
      kill();
      throw new Error(`wrangler dev was not ready in time:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    stateDir,
    sql: async (query) => {
      const { stdout } = await run(WRANGLER, ["d1", "execute", "DB", "--local", "--config", snapshot.config, "--persist-to", stateDir, "--json", "--command", query], { cwd, env, maxBuffer: 256 * 1024 * 1024 });
      return (JSON.parse(stdout) as Array<{ results: Array<Record<string, unknown>> }>).flatMap((r) => r.results);
    },
    output: () => output,
    stop: async () => {
      kill();
      await new Promise((r) => setTimeout(r, 300));
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
}
