/**
 * A project outside this repository that installs the SDK the way a user does: `npm pack` the
 * workspace, then `npm install <tarball>` offline in a temporary folder with its own package.json.
 * Used by test/sdk/package.test.ts for the package itself and for the snippets of docs/sdk.md.
 */
import { execFile } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import ts from "typescript";

const run = promisify(execFile);
export const ROOT = resolve(import.meta.dirname, "../../..");

export interface ScratchProject {
  dir: string;
  tarball: string;
  /** The paths inside the tarball, as npm pack lists them. */
  packed: string[];
}

/** The environment for npm and node in the scratch project: none of the npm settings of a surrounding `npm run`. */
export function cleanEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of Object.keys(env)) if (/^npm_/i.test(name)) delete env[name];
  return { ...env, npm_config_update_notifier: "false", npm_config_fund: "false", npm_config_audit: "false" };
}

interface PackEntry {
  filename: string;
  files: { path: string }[];
}

/** Packs the SDK workspace (its prepack builds dist/) and installs the tarball, offline, in a new scratch project. */
export async function scratchProject(): Promise<ScratchProject> {
  const dir = await mkdtemp(join(tmpdir(), "muscle-mem-sdk-consumer-"));
  const env = cleanEnv();
  const packed = await run("npm", ["pack", "-w", "@muscle-mem/sdk", "--pack-destination", dir, "--json", "--offline"], {
    cwd: ROOT,
    env,
    maxBuffer: 16 << 20,
  });
  const [entry] = JSON.parse(packed.stdout) as PackEntry[];
  const tarball = join(dir, entry.filename);
  await writeFile(join(dir, "package.json"), JSON.stringify({ name: "scratch-consumer", private: true, type: "module" }, null, 2));
  await run("npm", ["install", "--offline", "--no-audit", "--no-fund", tarball], { cwd: dir, env, maxBuffer: 16 << 20 });
  return { dir, tarball, packed: entry.files.map((f) => f.path) };
}

/**
 * What a Node project type-checks with: NodeNext resolution (which honours the package's `exports`), strict,
 * the package's own declarations checked too (no skipLibCheck), and @types/node, taken from this repository
 * because the scratch project installs nothing from the registry.
 */
export function consumerOptions(): ts.CompilerOptions {
  return {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ["lib.es2022.d.ts"],
    strict: true,
    noEmit: true,
    skipLibCheck: false,
    typeRoots: [join(ROOT, "node_modules/@types")],
    types: ["node"],
  };
}

/** Type-checks files of the scratch project; returns each error as "file:line: message", and where the SDK resolved from. */
export function typecheck(files: string[]): { errors: string[]; resolvedSdk: string | undefined } {
  const program = ts.createProgram(files, consumerOptions());
  const errors = ts.getPreEmitDiagnostics(program).map((d) => {
    const line = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : "?";
    return `${d.file?.fileName ?? ""}:${line}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`;
  });
  const resolvedSdk = program
    .getSourceFiles()
    .map((f) => f.fileName)
    .find((f) => f.endsWith("@muscle-mem/sdk/dist/index.d.ts"));
  return { errors, resolvedSdk };
}
