import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { configProblems, readWranglerToml, warningsIn, type WranglerToml } from "../../scripts/deploy-config";

const ROOT = resolve(import.meta.dirname, "../..");
const repoToml = (): WranglerToml => readWranglerToml(join(ROOT, "wrangler.toml"));
const repoScripts = Object.values((JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts);

describe("npm run check:deploy's config checks (scripts/deploy-config.ts)", () => {
  it("Should find nothing wrong with the committed wrangler.toml and package.json", () => {
    expect(configProblems(repoToml(), repoScripts)).toEqual([]);
  });

  it("Should fail when an environment lacks a top-level var, naming the var and the section", () => {
    const toml = repoToml();
    delete toml.env?.staging.vars?.TEMPLATE_INDUCTION;
    expect(configProblems(toml, repoScripts)).toEqual([expect.stringMatching(/^\[env\.staging\.vars\] lacks TEMPLATE_INDUCTION /)]);
    (toml.vars as Record<string, unknown>).NEW_VAR = "1";
    const problems = configProblems(toml, repoScripts);
    expect(problems).toHaveLength(2);
    expect(problems.join("\n")).toContain("[env.production.vars] lacks NEW_VAR");
  });

  it("Should fail on a placeholder database_id in an environment, and accept a missing or real one", () => {
    const toml = repoToml();
    const db = toml.env?.production.d1_databases?.[0];
    if (!db) throw new Error("production has no database");
    for (const placeholder of ["replace-with-production-database-id", "00000000-0000-0000-0000-000000000000", "<the id wrangler printed>"]) {
      db.database_id = placeholder;
      expect(configProblems(toml, repoScripts).join("\n")).toContain(`database_id "${placeholder}" is a placeholder`);
    }
    db.database_id = "0b3c6a1e-5d2f-4c8a-9e7b-1f2a3b4c5d6e";
    expect(configProblems(toml, repoScripts)).toEqual([]);
    delete db.database_id;
    expect(configProblems(toml, repoScripts)).toEqual([]);
  });

  it("Should fail when an npm script deploys the top level, whose id is the local placeholder", () => {
    expect(configProblems(repoToml(), ["wrangler deploy"])).toHaveLength(1);
    expect(
      configProblems(repoToml(), ["tsx scripts/migrate.ts --remote && wrangler deploy --env production", "wrangler deploy --dry-run --outdir dist"]),
    ).toEqual([]);
  });

  it("Should find wrangler's warning blocks and nothing else", () => {
    const output = [
      " ⛅️ wrangler 4.86.0",
      "▲ [WARNING] Processing wrangler.toml configuration:",
      "",
      '    - "vars.UPSTREAM_TIMEOUT_MS" exists at the top level, but not on "env.staging.vars".',
      "Total Upload: 1262.20 KiB / gzip: 234.62 KiB",
      "--dry-run: exiting now.",
    ].join("\n");
    const warnings = warningsIn(output);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("UPSTREAM_TIMEOUT_MS");
    expect(warnings[0]).not.toContain("Total Upload");
    expect(warningsIn("Total Upload: 1 KiB\n--dry-run: exiting now.")).toEqual([]);
    // As wrangler 4.86 prints it, coloured even with NO_COLOR=1.
    const coloured = "\u001b[33m▲ \u001b[43;33m[\u001b[43;30mWARNING\u001b[43;33m]\u001b[0m \u001b[1mProcessing wrangler.toml configuration:\u001b[0m\n  - x\n";
    expect(warningsIn(coloured)).toEqual(["▲ [WARNING] Processing wrangler.toml configuration:\n  - x"]);
  });
});
