/**
 * Applies the D1 migrations to every shard that `D1_SHARDS` lists (src/store/shards.ts),
 * for the top level of wrangler.toml or one `--env`. `npm start` runs it with `--local`,
 * `npm run deploy*` with `--remote` (their `predeploy*` scripts).
 *
 *   tsx scripts/migrate.ts --local [--persist-to DIR]
 *   tsx scripts/migrate.ts --remote [--env staging]
 *
 * Fails before touching anything when a listed shard has no `[[d1_databases]]` entry.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parse } from "smol-toml";
import { shardNames } from "../src/store/shards";

const ROOT = resolve(import.meta.dirname, "..");

interface Section {
  vars?: Record<string, unknown>;
  d1_databases?: Array<{ binding?: string }>;
}

function usage(message: string): never {
  console.error(`migrate: ${message}\nusage: tsx scripts/migrate.ts --local|--remote [--env NAME] [--persist-to DIR]`);
  process.exit(2);
}

const args = process.argv.slice(2);
const where = args.includes("--remote") ? "--remote" : args.includes("--local") ? "--local" : usage("say --local or --remote");
const valueOf = (flag: string): string | undefined => {
  const i = args.indexOf(flag);
  return i >= 0 ? (args[i + 1] ?? usage(`${flag} needs a value`)) : undefined;
};
const envName = valueOf("--env");
const persistTo = valueOf("--persist-to");

const config = parse(readFileSync(join(ROOT, "wrangler.toml"), "utf8")) as Section & { env?: Record<string, Section> };
const section = envName ? config.env?.[envName] : config;
if (!section) usage(`wrangler.toml has no [env.${envName}]`);
const names = shardNames(typeof section.vars?.D1_SHARDS === "string" ? section.vars.D1_SHARDS : undefined);
const bound = new Set((section.d1_databases ?? []).map((d) => d.binding));
const missing = names.filter((n) => !bound.has(n));
if (missing.length > 0) usage(`D1_SHARDS lists ${missing.join(", ")}, which ${missing.length === 1 ? "has" : "have"} no [[${envName ? `env.${envName}.` : ""}d1_databases]] entry`);

for (const name of names) {
  const cmd = ["d1", "migrations", "apply", name, where, ...(envName ? ["--env", envName] : []), ...(persistTo ? ["--persist-to", persistTo] : [])];
  console.log(`migrate: wrangler ${cmd.join(" ")}`);
  // CI=true: apply without the interactive confirmation wrangler asks for in a terminal.
  const run = spawnSync(join(ROOT, "node_modules/.bin/wrangler"), cmd, { stdio: "inherit", env: { ...process.env, CI: "true" } });
  if (run.status !== 0) process.exit(run.status ?? 1);
}
