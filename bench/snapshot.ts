import { execFile } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { parse, stringify } from "smol-toml";
import { quietEnv, startWranglerDev, type WranglerDev, type WranglerDevOptions } from "../test/support/wrangler-dev";

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, "..");
const WRANGLER = join(ROOT, "node_modules/.bin/wrangler");

/** A bundled build of the Worker in a folder of its own, with the wrangler.toml that runs it. */
export interface Snapshot {
  dir: string;
  config: string;
  remove: () => void;
}

/**
 * Bundles the Worker once into a temporary folder with its own wrangler.toml,
 * migrations, .dev.vars and dashboard assets. `wrangler dev` watches its sources; on a checkout
 * that several people edit, a snapshot keeps a run measuring one build. `edit`
 * may change the parsed wrangler.toml first (scripts/shard-load-dev.ts binds four databases).
 * `root` is the checkout to bundle (another worktree, for a before/after comparison: bench/hit-ab.ts).
 */
export async function snapshotWorker(edit?: (toml: Record<string, unknown>) => void, root = ROOT): Promise<Snapshot> {
  const dir = mkdtempSync(join(tmpdir(), "mm-bench-"));
  const env = quietEnv(dir);
  await run(WRANGLER, ["deploy", "--dry-run", "--outdir", join(dir, "dist")], { cwd: root, env, maxBuffer: 64 * 1024 * 1024 });
  if (!existsSync(join(dir, "dist/index.js"))) throw new Error(`bundle missing in ${dir}`);
  cpSync(join(root, "migrations"), join(dir, "migrations"), { recursive: true });
  if (existsSync(join(root, ".dev.vars"))) cpSync(join(root, ".dev.vars"), join(dir, ".dev.vars"));
  // The dashboard too: wrangler dev restarts the Worker when its assets folder changes.
  cpSync(join(root, "dashboard"), join(dir, "dashboard"), { recursive: true });
  const toml = parse(readFileSync(join(root, "wrangler.toml"), "utf8"));
  toml.main = "dist/index.js";
  edit?.(toml);
  const config = join(dir, "wrangler.toml");
  writeFileSync(config, stringify(toml));
  return { dir, config, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Starts `wrangler dev` on the snapshot, with fresh local state, and waits for /healthz. The benchmarks seed
 * trees through tenant keys (bench/scale-seed.ts): the operator's grant, IMPORT_TENANTS, unless `vars` says otherwise.
 */
export function startSnapshotDev(
  snapshot: { dir: string; config: string },
  vars: Record<string, string>,
  more: Pick<WranglerDevOptions, "inspector"> = {},
): Promise<WranglerDev> {
  return startWranglerDev({ config: snapshot.config, vars: { IMPORT_TENANTS: "*", ...vars }, logLevel: "error", ...more });
}
