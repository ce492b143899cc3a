import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * A freshly migrated local D1 state folder, built once per set of migrations and copied for each
 * `wrangler dev`: `wrangler d1 migrations apply` starts its own workerd and costs seconds of CPU,
 * while a copy of the migrated SQLite files costs milliseconds. Every test file still gets its own
 * state folder, with exactly what `migrations apply` would have left there.
 *
 * The template's name is a hash of everything that shapes it (wrangler's version, wrangler.toml, the
 * bindings, every migration's name and text), so a changed migration builds a new one. Two processes
 * that build the same template at once each build in a folder of their own and rename it into place;
 * the first rename wins and the other copy is dropped.
 */
export async function copyMigratedState(root: string, bindings: readonly string[], stateDir: string, migrate: (dir: string) => Promise<void>): Promise<void> {
  const template = join(tmpdir(), `mm-migrated-${fingerprint(root, bindings)}`);
  if (!existsSync(template)) {
    const building = mkdtempSync(`${template}.building-`);
    try {
      await migrate(building);
      renameSync(building, template);
    } catch (error) {
      rmSync(building, { recursive: true, force: true });
      // Another process renamed its build into place first: use that one.
      if (!existsSync(template)) throw error;
    }
  }
  cpSync(template, stateDir, { recursive: true });
}

function fingerprint(root: string, bindings: readonly string[]): string {
  const hash = createHash("sha256");
  const wrangler = JSON.parse(readFileSync(join(root, "node_modules/wrangler/package.json"), "utf8")) as { version: string };
  hash.update(`wrangler ${wrangler.version}\n`);
  hash.update(readFileSync(join(root, "wrangler.toml")));
  hash.update(`\nbindings ${bindings.join(",")}\n`);
  const migrations = join(root, "migrations");
  for (const name of readdirSync(migrations)
    .filter((n) => n.endsWith(".sql"))
    .sort()) {
    hash.update(`\n${name}\n`);
    hash.update(readFileSync(join(migrations, name)));
  }
  return hash.digest("hex").slice(0, 16);
}
