/**
 * `npm run check:deploy`: everything about a deploy that can be checked offline.
 *
 * 1. `wrangler deploy --dry-run --outdir dist` builds the top-level Worker, and a
 *    dry run of every `[env.*]` section proves their bindings resolve.
 * 2. Prints the bundle size, raw and gzip, against the Workers size limits.
 * 3. Regenerates `wrangler types` into a temporary file and fails when it differs
 *    from the committed worker-configuration.d.ts (run `npm run types` to fix).
 * 4. Notes each environment that serves only on workers.dev, where the colo layer does nothing, and what that
 *    costs (measured in docs/deploy.md "Put it on a custom domain").
 * 5. Fails on any warning wrangler prints in those runs, when an `[env.*.vars]`
 *    section lacks a var the top level has (vars are not inherited), and on a
 *    placeholder `database_id` in a section that npm scripts deploy (an
 *    environment's database may omit it: the deploy finds it by name).
 *
 * Needs no account and no network: CI=true, WRANGLER_SEND_METRICS=false.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { gzipSync } from "node:zlib";
import { configProblems, readWranglerToml, warningsIn, workersDevNotes } from "./deploy-config";

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, "..");
const WRANGLER = join(ROOT, "node_modules/.bin/wrangler");
/** Workers script size limits after compression (docs/limits.md). */
const LIMIT_FREE_GZIP = 3 * 1024 * 1024;
const LIMIT_PAID_GZIP = 10 * 1024 * 1024;

const scratch = mkdtempSync(join(tmpdir(), "mm-check-deploy-"));
const quiet = {
  ...process.env,
  CI: "true",
  WRANGLER_SEND_METRICS: "false",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
  XDG_CONFIG_HOME: join(scratch, "config"),
  WRANGLER_LOG_PATH: join(scratch, "logs"),
  NO_COLOR: "1",
  FORCE_COLOR: "0",
};

const config = readWranglerToml(join(ROOT, "wrangler.toml"));
const ENVIRONMENTS = Object.keys(config.env ?? {});

async function wrangler(args: string[]): Promise<string> {
  try {
    const { stdout, stderr } = await run(WRANGLER, args, { cwd: ROOT, env: quiet, maxBuffer: 64 * 1024 * 1024 });
    const warnings = warningsIn(`${stdout}\n${stderr}`);
    if (warnings.length > 0) throw new Error(`wrangler ${args.join(" ")} printed ${warnings.length} warning(s):\n${warnings.join("\n")}`);
    return `${stdout}\n${stderr}`;
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; message: string };
    if (failed.stdout === undefined) throw error;
    throw new Error(`wrangler ${args.join(" ")} failed:\n${failed.stdout ?? ""}${failed.stderr ?? failed.message}`);
  }
}

function kib(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KiB`;
}

/** Builds the top level into dist/ and dry-runs each environment into a scratch folder. */
async function checkBuilds(): Promise<void> {
  // `--env=` names the top level explicitly (without it wrangler warns that environments exist).
  await wrangler(["deploy", "--dry-run", "--env=", "--outdir", "dist"]);
  const bundle = readFileSync(join(ROOT, "dist/index.js"));
  const gzip = gzipSync(bundle, { level: 9 }).byteLength;
  console.log(`bundle  dist/index.js  raw ${kib(bundle.byteLength)}  gzip ${kib(gzip)}`);
  console.log(`        limits (gzip): free ${kib(LIMIT_FREE_GZIP)}, paid ${kib(LIMIT_PAID_GZIP)}; ${((gzip / LIMIT_FREE_GZIP) * 100).toFixed(1)}% of free`);
  if (gzip > LIMIT_FREE_GZIP) console.warn("warning: the bundle is over the free plan's compressed size limit");
  if (gzip > LIMIT_PAID_GZIP) throw new Error("the bundle is over the paid plan's compressed size limit");
  for (const env of ENVIRONMENTS) {
    const out = await wrangler(["deploy", "--dry-run", "--env", env, "--outdir", join(scratch, `dist-${env}`)]);
    for (const binding of ["env.DB", "env.TREE_WRITER"]) {
      if (!out.includes(binding)) throw new Error(`[env.${env}] has no ${binding} binding:\n${out}`);
    }
    console.log(`env     ${env.padEnd(11)} dry run ok (${statSync(join(scratch, `dist-${env}`, "index.js")).size} bytes)`);
  }
}

/** Fails when configProblems finds anything. */
function checkConfig(): void {
  const scripts = Object.values((JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts?: Record<string, string> }).scripts ?? {});
  const problems = configProblems(config, scripts);
  if (problems.length > 0) throw new Error(`wrangler.toml:\n  ${problems.join("\n  ")}`);
  console.log(`config  ${ENVIRONMENTS.map((e) => `[env.${e}]`).join(", ")} carry every top-level var; no placeholder database_id is deployed`);
  const notes = workersDevNotes(config);
  for (const note of notes) console.log(`note    ${note}`);
  if (notes.length > 0) {
    console.log(
      "        what that costs, measured: cold hits triple (20% of hits to 60%), each 1 Durable Object call, 2 D1 queries and 5.7 rows read, about +$1,440 a month at 10,000 req/s (docs/deploy.md)",
    );
  }
}

/** The generated file minus the lines that name where and how it was generated. */
function normalised(text: string): string[] {
  return text
    .split("\n")
    .filter((line) => !line.startsWith("// Generated by Wrangler by running"))
    .map((line) => line.replace(/import\("[^"]*\/src\/index"\)/g, 'import("./src/index")'));
}

/** Fails when `wrangler types` would write something other than the committed file. */
async function checkTypes(): Promise<void> {
  const fresh = join(scratch, "worker-configuration.d.ts");
  await wrangler(["types", fresh]);
  const want = normalised(readFileSync(fresh, "utf8"));
  const have = normalised(readFileSync(join(ROOT, "worker-configuration.d.ts"), "utf8"));
  const diffs: string[] = [];
  for (let i = 0; i < Math.max(want.length, have.length) && diffs.length < 20; i++) {
    if (want[i] !== have[i]) diffs.push(`  line ${i + 1}\n    committed: ${have[i] ?? "<end>"}\n    generated: ${want[i] ?? "<end>"}`);
  }
  if (diffs.length > 0) {
    throw new Error(`worker-configuration.d.ts is not what \`wrangler types\` generates; run \`npm run types\` and commit it:\n${diffs.join("\n")}`);
  }
  console.log("types   worker-configuration.d.ts is current");
}

try {
  checkConfig();
  await checkBuilds();
  await checkTypes();
  console.log("check:deploy ok");
} catch (error) {
  console.error(`check:deploy FAILED: ${(error as Error).message}`);
  process.exitCode = 1;
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
