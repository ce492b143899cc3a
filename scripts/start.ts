/**
 * `npm start`: applies the local D1 migrations (one line per shard), runs `wrangler dev` with
 * every extra argument passed through (`npm start -- --port 9000 --var NAME:VALUE`), and once
 * the Worker answers /healthz prints where it is: the proxy and dashboard URLs and the local
 * admin token.
 *
 * Offline quiet, unless the caller set them: WRANGLER_SEND_METRICS=false (no telemetry),
 * CLOUDFLARE_CF_FETCH_ENABLED=false (no fetch of workers.cloudflare.com for `request.cf`, which
 * printed an ENOTFOUND stack offline; locally `request.cf` is a placeholder either way),
 * WRANGLER_HIDE_BANNER=true (no npm update check; the line below names the version). Wrangler's
 * warnings and errors still print as they are.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import { parse } from "smol-toml";
import { pathToFileURL } from "node:url";
import { TRAFFIC_MODEL_URL } from "../tools/traffic/model";
import { migrate } from "./migrate";

const ROOT = resolve(import.meta.dirname, "..");
const WRANGLER = join(ROOT, "node_modules/.bin/wrangler");
/** The token .dev.vars ships with: a development default, safe to print. */
const DEV_ADMIN_TOKEN = "dev-admin-token";

/** The value of `--name VALUE` or `--name=VALUE` (the last one wins), as wrangler reads them. */
export function flagValue(args: string[], ...names: string[]): string | undefined {
  let value: string | undefined;
  args.forEach((arg, i) => {
    for (const name of names) {
      if (arg === name && i + 1 < args.length) value = args[i + 1];
      else if (arg.startsWith(`${name}=`)) value = arg.slice(name.length + 1);
    }
  });
  return value;
}

/** The `--var NAME:VALUE` overrides among the arguments. */
export function varOverrides(args: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  args.forEach((arg, i) => {
    const spec = arg === "--var" ? args[i + 1] : arg.startsWith("--var=") ? arg.slice(6) : undefined;
    const colon = spec?.indexOf(":") ?? -1;
    if (spec && colon > 0) out[spec.slice(0, colon)] = spec.slice(colon + 1);
  });
  return out;
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((done) => {
    const server = createServer();
    server.once("error", () => done(false));
    server.listen(port, "127.0.0.1", () => server.close(() => done(true)));
  });
}

/** 8787 when it is free, else a free port (wrangler would pick one itself, but then we could not find it). */
async function defaultPort(): Promise<number> {
  if (await portIsFree(8787)) return 8787;
  return new Promise((done) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => done(typeof address === "object" && address ? address.port : 8787));
    });
  });
}

/** What the banner says about the admin token: the dev default in full, anything else by name only. */
function adminTokenLine(overrides: Record<string, string>): string {
  const file = join(ROOT, ".dev.vars");
  const fromFile = existsSync(file) ? /^\s*ADMIN_TOKEN\s*=\s*"?([^"\n]*)"?\s*$/m.exec(readFileSync(file, "utf8"))?.[1] : undefined;
  const token = overrides.ADMIN_TOKEN ?? fromFile;
  if (token === undefined) return 'not set: add ADMIN_TOKEN="dev-admin-token" to .dev.vars (the API and dashboard refuse every admin call without it)';
  if (token === DEV_ADMIN_TOKEN) return `${token}   (from .dev.vars: a local development token, sees every tenant)`;
  return `the ADMIN_TOKEN you set ${overrides.ADMIN_TOKEN ? "with --var" : "in .dev.vars"} (not printed: it is not the development default)`;
}

function upstreamOf(args: string[], overrides: Record<string, string>): string {
  if (overrides.UPSTREAM_BASE_URL) return overrides.UPSTREAM_BASE_URL;
  const config = parse(readFileSync(join(ROOT, "wrangler.toml"), "utf8")) as {
    vars?: Record<string, unknown>;
    env?: Record<string, { vars?: Record<string, unknown> }>;
  };
  const env = flagValue(args, "--env", "-e");
  const vars = env ? config.env?.[env]?.vars : config.vars;
  return typeof vars?.UPSTREAM_BASE_URL === "string" ? vars.UPSTREAM_BASE_URL : "https://api.openai.com/v1";
}

/** The lines printed once the Worker is up. */
export function banner(url: string, args: string[], version: string): string {
  const overrides = varOverrides(args);
  const upstream = upstreamOf(args, overrides);
  const traffic =
    upstream === TRAFFIC_MODEL_URL
      ? "npm run traffic          (in another terminal: scripted agents fill the dashboard, no API key)"
      : "npm run start:demo, then npm run traffic   (sample traffic from a local scripted model, no API key)";
  return [
    "",
    `muscle-mem is running (wrangler ${version}; Ctrl-C stops it)`,
    `  OpenAI base URL   ${url}/v1   misses go to ${upstream} (UPSTREAM_BASE_URL)`,
    `  dashboard         ${url}/`,
    `  admin token       ${adminTokenLine(overrides)}`,
    `  sample traffic    ${traffic}`,
    "",
  ].join("\n");
}

async function waitUntilUp(url: string, exited: () => boolean): Promise<boolean> {
  while (!exited()) {
    try {
      const res = await fetch(`${url}/healthz`);
      if (res.ok) return true;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return false;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const status = migrate({ where: "--local", env: flagValue(args, "--env", "-e"), persistTo: flagValue(args, "--persist-to") });
  if (status !== 0) process.exit(status);
  const port = flagValue(args, "--port") ?? String(await defaultPort());
  const devArgs = ["dev", ...(flagValue(args, "--port") ? [] : ["--port", port]), ...args];
  const env = { ...process.env };
  env.WRANGLER_SEND_METRICS ??= "false";
  env.CLOUDFLARE_CF_FETCH_ENABLED ??= "false";
  env.WRANGLER_HIDE_BANNER ??= "true";
  const child = spawn(WRANGLER, devArgs, { cwd: ROOT, env, stdio: "inherit" });
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, () => child.kill(signal));
  child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
  const ip = flagValue(args, "--ip") ?? "localhost";
  const host = ip === "0.0.0.0" || ip === "::" || ip === "*" ? "localhost" : ip.includes(":") ? `[${ip}]` : ip;
  const url = `${flagValue(args, "--local-protocol") === "https" ? "https" : "http"}://${host}:${port}`;
  if (await waitUntilUp(url, () => child.exitCode !== null)) {
    const { version } = JSON.parse(readFileSync(join(ROOT, "node_modules/wrangler/package.json"), "utf8")) as { version: string };
    console.log(banner(url, args, version));
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) await main();
