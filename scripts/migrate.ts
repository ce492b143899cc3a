/**
 * Applies the D1 migrations to every shard that `D1_SHARDS` lists (src/store/shards/shards.ts),
 * for the top level of wrangler.toml or one `--env`. `npm start` (scripts/start.ts) runs it
 * with `--local`, `npm run deploy*` with `--remote` (their `predeploy*` scripts).
 *
 *   tsx scripts/migrate.ts --local [--persist-to DIR] [--env NAME]
 *   tsx scripts/migrate.ts --remote [--env staging]
 *
 * Locally it prints one line per shard (what was applied, or "up to date") and wrangler's
 * whole output only when it fails; remotely wrangler's output goes through as it is.
 * Fails before touching anything when a listed shard has no `[[d1_databases]]` entry.
 *
 * Remotely, a `[[d1_databases]]` entry without `database_id` (the environments in wrangler.toml)
 * is found by its `database_name` in the account (`wrangler d1 list --json`) and created when it
 * does not exist yet (`wrangler d1 create`); the migrations then run against a copy of
 * wrangler.toml with the id filled in, and `wrangler deploy` binds the same database by name.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parse, stringify } from "smol-toml";
import { shardNames } from "../src/store/shards/shards";
import { D1_LOCATIONS, parseShardLocations } from "../src/store/shards/locations";

const ROOT = resolve(import.meta.dirname, "..");
const WRANGLER = join(ROOT, "node_modules/.bin/wrangler");

interface Database {
  binding?: string;
  database_name?: string;
  database_id?: string;
  migrations_dir?: string;
}

interface Section {
  vars?: Record<string, unknown>;
  d1_databases?: Database[];
}

type Config = Section & { main?: string; assets?: { directory?: string }; env?: Record<string, Section> };

const readConfig = (): Config => parse(readFileSync(join(ROOT, "wrangler.toml"), "utf8")) as Config;

export interface MigrateOptions {
  where: "--local" | "--remote";
  env?: string;
  persistTo?: string;
}

/** The shards of the top level or of `[env.NAME]`, or a message saying what is wrong. */
export function shardsToMigrate(envName: string | undefined): string[] | string {
  const config = readConfig();
  const section = envName ? config.env?.[envName] : config;
  if (!section) return `wrangler.toml has no [env.${envName}]`;
  const names = shardNames(typeof section.vars?.D1_SHARDS === "string" ? section.vars.D1_SHARDS : undefined);
  const bound = new Set((section.d1_databases ?? []).map((d) => d.binding));
  const missing = names.filter((n) => !bound.has(n));
  if (missing.length === 0) return names;
  return `D1_SHARDS lists ${missing.join(", ")}, which ${missing.length === 1 ? "has" : "have"} no [[${envName ? `env.${envName}.` : ""}d1_databases]] entry`;
}

/** One line from wrangler's output of a successful local apply: the migrations it applied, or none. */
export function summary(output: string): string {
  if (output.includes("No migrations to apply")) return "up to date";
  const applied = [...new Set([...output.matchAll(/([\w.-]+\.sql)\s*│\s*✅/g)].map((m) => m[1]))];
  return applied.length > 0 ? `applied ${applied.join(", ")}` : "done";
}

function wranglerJson(args: string[]): unknown {
  const run = spawnSync(WRANGLER, args, { cwd: ROOT, encoding: "utf8", env: { ...process.env, CI: "true" } });
  if (run.status !== 0) throw new Error(`wrangler ${args.join(" ")} failed:\n${run.stdout}${run.stderr}`);
  return JSON.parse(run.stdout) as unknown;
}

/**
 * The `wrangler d1 create` arguments for a shard: `--location <hint>` from D1_SHARD_LOCATIONS, so that its
 * primary is created where its trees' Durable Objects are placed. A hint D1 cannot take (`sam`, `afr`, `me`)
 * or an invalid var creates it without one, and says so.
 */
export function createArgs(name: string, binding: string | undefined, locations: string | undefined): string[] {
  const parsed = parseShardLocations(locations);
  if (!parsed.ok) {
    console.warn(`migrate: D1_SHARD_LOCATIONS ${parsed.message}; creating ${name} without --location`);
    return ["d1", "create", name];
  }
  const hint = binding ? parsed.hints.get(binding) : undefined;
  if (!hint) return ["d1", "create", name];
  if (!D1_LOCATIONS.includes(hint)) {
    console.warn(`migrate: D1 has no '${hint}' location (it takes ${D1_LOCATIONS.join(", ")}); creating ${name} without --location`);
    return ["d1", "create", name];
  }
  return ["d1", "create", name, "--location", hint];
}

/** The id of the account's D1 database called `name`, created first (where D1_SHARD_LOCATIONS puts its binding) when there is none. */
function remoteDatabaseId(name: string, binding?: string, locations?: string): string {
  const find = () => (wranglerJson(["d1", "list", "--json"]) as Array<{ uuid: string; name: string }>).find((db) => db.name === name)?.uuid;
  const existing = find();
  if (existing) return existing;
  const args = createArgs(name, binding, locations);
  console.log(`migrate: creating the D1 database ${name} (wrangler ${args.join(" ")})`);
  const created = spawnSync(WRANGLER, args, { cwd: ROOT, stdio: "inherit", env: { ...process.env, CI: "true" } });
  const id = created.status === 0 ? find() : undefined;
  if (!id) throw new Error(`could not create the D1 database ${name}`);
  return id;
}

/**
 * A copy of wrangler.toml (absolute paths) whose `env` databases without an id carry the account's id
 * for their name, or undefined when every database of the section already has an id.
 */
export function configWithIds(
  envName: string | undefined,
  idOf: (name: string, binding?: string, locations?: string) => string = remoteDatabaseId,
): string | undefined {
  const config = readConfig();
  const section = envName ? config.env?.[envName] : config;
  const missing = (section?.d1_databases ?? []).filter((db) => !db.database_id);
  if (missing.length === 0) return undefined;
  const locations = typeof section?.vars?.D1_SHARD_LOCATIONS === "string" ? section.vars.D1_SHARD_LOCATIONS : undefined;
  for (const db of missing)
    db.database_id = idOf(db.database_name ?? usage(`[[d1_databases]] ${db.binding ?? ""} has neither database_id nor database_name`), db.binding, locations);
  for (const s of [config, ...Object.values(config.env ?? {})])
    for (const db of s.d1_databases ?? []) db.migrations_dir = resolve(ROOT, db.migrations_dir ?? "migrations");
  if (config.main) config.main = resolve(ROOT, config.main);
  if (config.assets?.directory) config.assets.directory = resolve(ROOT, config.assets.directory);
  const file = join(mkdtempSync(join(tmpdir(), "mm-migrate-")), "wrangler.toml");
  writeFileSync(file, stringify(config));
  return file;
}

/** Applies the migrations to every shard; returns the exit status (0: all applied). */
export function migrate(options: MigrateOptions): number {
  const names = shardsToMigrate(options.env);
  if (typeof names === "string") {
    console.error(`migrate: ${names}`);
    return 2;
  }
  const quiet = options.where === "--local";
  const config = quiet ? undefined : configWithIds(options.env);
  for (const name of names) {
    const cmd = [
      "d1",
      "migrations",
      "apply",
      name,
      options.where,
      ...(options.env ? ["--env", options.env] : []),
      ...(options.persistTo ? ["--persist-to", options.persistTo] : []),
      ...(config ? ["--config", config] : []),
    ];
    if (!quiet) console.log(`migrate: wrangler ${cmd.join(" ")}`);
    // CI=true: apply without the interactive confirmation wrangler asks for in a terminal.
    // WRANGLER_HIDE_BANNER: no banner (and no npm update check) per shard.
    const env = { ...process.env, CI: "true", ...(quiet ? { WRANGLER_HIDE_BANNER: "true", NO_COLOR: "1", FORCE_COLOR: "0" } : {}) };
    const run = spawnSync(WRANGLER, cmd, { stdio: quiet ? "pipe" : "inherit", env, encoding: "utf8", cwd: ROOT });
    if (run.status !== 0) {
      if (quiet) console.error(`migrate: wrangler ${cmd.join(" ")} failed:\n${run.stdout ?? ""}${run.stderr ?? ""}${run.error ? String(run.error) : ""}`);
      return run.status ?? 1;
    }
    if (quiet) console.log(`migrate: ${name} (local${options.persistTo ? `, ${options.persistTo}` : ""}): ${summary(`${run.stdout}${run.stderr}`)}`);
  }
  return 0;
}

function usage(message: string): never {
  console.error(`migrate: ${message}\nusage: tsx scripts/migrate.ts --local|--remote [--env NAME] [--persist-to DIR]`);
  process.exit(2);
}

function main(args: string[]): void {
  const where = args.includes("--remote") ? "--remote" : args.includes("--local") ? "--local" : usage("say --local or --remote");
  const flagValue = (flag: string): string | undefined => {
    const i = args.indexOf(flag);
    return i >= 0 ? (args[i + 1] ?? usage(`${flag} needs a value`)) : undefined;
  };
  process.exitCode = migrate({ where, env: flagValue("--env"), persistTo: flagValue("--persist-to") });
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) main(process.argv.slice(2));
