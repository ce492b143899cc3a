/**
 * The offline checks of wrangler.toml that `npm run check:deploy` (scripts/check-deploy.ts) runs
 * besides wrangler's own: every environment carries every top-level var (wrangler does not inherit
 * vars), no deployed section binds a placeholder D1 database id, and wrangler printed no warning.
 */
import { readFileSync } from "node:fs";
import { stripVTControlCharacters } from "node:util";
import { parse } from "smol-toml";

export interface Section {
  vars?: Record<string, unknown>;
  workers_dev?: boolean;
  routes?: unknown[];
  route?: unknown;
  d1_databases?: Array<{ binding?: string; database_name?: string; database_id?: string }>;
}

export type WranglerToml = Section & { env?: Record<string, Section> };

export const readWranglerToml = (path: string): WranglerToml => parse(readFileSync(path, "utf8")) as WranglerToml;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** The top level's id: it names the local database of `npm start` and the tests, nothing remote. */
const LOCAL_ID = "00000000-0000-0000-0000-000000000000";
const isPlaceholder = (id: string): boolean => !UUID.test(id) || id === LOCAL_ID;

/** Wrangler's warning blocks: from `▲ [WARNING]` to the next line that starts unindented (colours stripped: wrangler colours them even with NO_COLOR). */
export function warningsIn(output: string): string[] {
  return stripVTControlCharacters(output)
    .split(/\n(?=\S)/)
    .filter((block) => block.includes("▲ [WARNING]"))
    .map((block) => block.trim());
}

/** What is wrong with the vars and databases of the sections npm scripts deploy (empty: nothing). */
export function configProblems(toml: WranglerToml, scripts: string[]): string[] {
  const problems: string[] = [];
  const top = Object.keys(toml.vars ?? {});
  for (const [name, section] of Object.entries(toml.env ?? {})) {
    const missing = top.filter((v) => !(v in (section.vars ?? {})));
    if (missing.length > 0) problems.push(`[env.${name}.vars] lacks ${missing.join(", ")} (vars are not inherited: copy them from [vars])`);
    for (const db of section.d1_databases ?? []) {
      if (db.database_id === undefined) {
        if (!db.database_name) problems.push(`[[env.${name}.d1_databases]] ${db.binding}: neither a database_id nor a database_name to find it by`);
      } else if (isPlaceholder(db.database_id)) {
        problems.push(
          `[[env.${name}.d1_databases]] ${db.binding}: database_id "${db.database_id}" is a placeholder (delete the line: the deploy finds or creates "${db.database_name}" by name; or paste the id \`wrangler d1 create\` printed)`,
        );
      }
    }
  }
  const topDeploys = scripts.filter((cmd) => /wrangler deploy(?![^&|;]*--env)/.test(cmd) && !cmd.includes("--dry-run"));
  if ((toml.d1_databases ?? []).some((db) => isPlaceholder(db.database_id ?? "")) && topDeploys.length > 0) {
    problems.push(`package.json deploys the top level (${topDeploys.join("; ")}), whose database_id is a placeholder: deploy an [env.*] instead`);
  }
  return problems;
}

/**
 * A note per environment that serves only on `*.workers.dev` (no `routes`): there the Cache API stores
 * nothing, so the colo layer does nothing and every hit an isolate does not hold is a cold lookup (a Durable
 * Object request and its D1 reads). Not a failure: a trial deploy may well live there.
 */
export function workersDevNotes(toml: WranglerToml): string[] {
  return Object.entries(toml.env ?? {})
    .filter(([, section]) => (section.routes === undefined || section.routes.length === 0) && section.route === undefined)
    .map(
      ([name]) =>
        `[env.${name}] has no routes: on workers.dev the colo layer (Cache API) stores nothing, so every hit this isolate does not hold costs a Durable Object request and its D1 reads; route it on a custom domain (docs/deploy.md "Put it on a custom domain")`,
    );
}
