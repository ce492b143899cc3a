import { execFile } from "node:child_process";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PRINTED_VALUE, tsSnippets } from "./support/doc-snippets.js";
import { cleanEnv, ROOT, scratchProject, typecheck, type ScratchProject } from "./support/scratch-project.js";

const run = promisify(execFile);

// Issue 27, item 7: the SDK is an installable package. It is packed, installed offline in a project outside
// this repository, and imported there by its name, both its JavaScript and its types.
let project: ScratchProject;
beforeAll(async () => {
  project = await scratchProject();
}, 180_000);
afterAll(async () => {
  if (project) await rm(project.dir, { recursive: true, force: true });
});

describe("Issue 27.7: @muscle-mem/sdk installs from its tarball and imports by name", () => {
  it("Should pack the build and the manifest, not the sources or the tests", () => {
    expect(project.packed).toContain("package.json");
    expect(project.packed).toContain("dist/index.js");
    expect(project.packed).toContain("dist/index.d.ts");
    expect(project.packed.filter((p) => !p.startsWith("dist/") && p !== "package.json" && p !== "README.md")).toEqual([]);
    expect(project.packed.filter((p) => p.endsWith(".ts") && !p.endsWith(".d.ts"))).toEqual([]);
  });

  it("Should install with no dependencies of its own", async () => {
    const manifest = JSON.parse(await readFile(join(project.dir, "node_modules/@muscle-mem/sdk/package.json"), "utf8")) as Record<string, unknown>;
    expect(manifest.name).toBe("@muscle-mem/sdk");
    expect(manifest.dependencies).toBeUndefined();
    expect(manifest.peerDependencies).toBeUndefined();
  });

  it("Should run an engine imported by the package's name: a miss, then a hit without the agent", async () => {
    const file = join(project.dir, "consumer.mjs");
    await writeFile(
      file,
      [
        'import { Check, Engine, MemoryStore } from "@muscle-mem/sdk";',
        "const store = new MemoryStore();",
        "const engine = new Engine({ store });",
        "const said = [];",
        'const fresh = new Check(() => "same", (a, b) => a === b);',
        'const greet = engine.function({ name: "greet", preCheck: fresh }, (who) => { said.push(who); });',
        "let agentRuns = 0;",
        "engine.setAgent((task) => { agentRuns++; greet(task); }).finalize();",
        'const hits = [await engine("erik"), await engine("erik")];',
        "console.log(JSON.stringify({ hits, agentRuns, said, stored: store.size }));",
      ].join("\n"),
    );
    const { stdout } = await run(process.execPath, [file], { cwd: project.dir, env: cleanEnv() });
    expect(JSON.parse(stdout)).toEqual({ hits: [false, true], agentRuns: 1, said: ["erik", "erik"], stored: 1 });
  });

  it("Should load with require() too, as Node 20.19+ and 22.12+ load ES modules for CommonJS", async () => {
    const file = join(project.dir, "consumer.cjs");
    await writeFile(file, 'const { Engine } = require("@muscle-mem/sdk");\nconsole.log(typeof new Engine().run);\n');
    const { stdout } = await run(process.execPath, [file], { cwd: project.dir, env: cleanEnv() });
    expect(stdout.trim()).toBe("function");
  });

  it("Should refuse imports of its internals: only the entry point is exported", async () => {
    const file = join(project.dir, "internals.mjs");
    await writeFile(file, 'await import("@muscle-mem/sdk/dist/engine.js");\n');
    const failed = await run(process.execPath, [file], { cwd: project.dir, env: cleanEnv() }).then(
      () => "",
      (e: { stderr: string }) => e.stderr,
    );
    expect(failed).toContain("ERR_PACKAGE_PATH_NOT_EXPORTED");
  });

  it("Should type-check a consumer against the package's declarations, and reject a misuse", async () => {
    const file = join(project.dir, "consumer.ts");
    await writeFile(
      file,
      [
        'import { Check, Engine, RemoteStore, type RunReport, type Trajectory } from "@muscle-mem/sdk";',
        "const engine = new Engine<{ qty: number }>();",
        "const near = new Check((x: number) => ({ x }), (a, b) => 1 - Math.abs(a.x - b.x) / 100, { threshold: 0.5 });",
        'const click = engine.function({ name: "click", preCheck: near }, (x: number, y: number): string => `${x},${y}`);',
        "const where: string = click(1, 2);",
        "engine.setAgent((_task, { params }) => { click(params.qty, 0); });",
        'const report: RunReport = await engine.run("buy", { params: { qty: 2 } });',
        "const trajectories: Trajectory[] = [];",
        'const store = new RemoteStore({ baseUrl: "http://127.0.0.1:1", namespace: "ns", token: "t" });',
        "// @ts-expect-error a function tool needs a name",
        "engine.function({}, () => 1);",
        "// @ts-expect-error the engine's params are typed",
        'await engine("buy", { params: { qty: "two" } });',
        "export { where, report, trajectories, store };",
      ].join("\n"),
    );
    const { errors, resolvedSdk } = typecheck([file]);
    expect(errors).toEqual([]);
    expect(resolvedSdk).toBe(join(project.dir, "node_modules/@muscle-mem/sdk/dist/index.d.ts"));
  });
});

// Issue 27, item 7: every snippet of docs/sdk.md runs as written, against the installed package.
describe("Issue 27.7: the TypeScript snippets of docs/sdk.md", () => {
  const page = resolve(ROOT, "docs/sdk.md");

  it("Should fence code only as ts (run here) or sh, so that no TypeScript escapes the check", async () => {
    const fences = (await readFile(page, "utf8")).split("\n").filter((l) => /^```\S/.test(l.trim()));
    expect(new Set(fences.map((l) => l.trim()))).toEqual(new Set(["```ts", "```sh"]));
  });

  it("Should import the package by name in every snippet, and type-check each against it", async () => {
    const snippets = tsSnippets(await readFile(page, "utf8"));
    expect(snippets.length).toBeGreaterThanOrEqual(6);
    for (const { line, code } of snippets) expect(code, `snippet at docs/sdk.md:${line}`).toMatch(/from "@muscle-mem\/sdk";/);
    const files = await writeSnippets(
      project.dir,
      snippets.map((s) => s.code),
    );
    const { errors, resolvedSdk } = typecheck(files);
    expect(errors).toEqual([]);
    expect(resolvedSdk).toBe(join(project.dir, "node_modules/@muscle-mem/sdk/dist/index.d.ts"));
  }, 120_000);

  it("Should run every snippet, printing what its comments say and no warning", async () => {
    const snippets = tsSnippets(await readFile(page, "utf8"));
    const files = await writeSnippets(
      project.dir,
      snippets.map((s) => s.code),
    );
    const clock = resolve(ROOT, "test/sdk/support/virtual-clock.ts");
    for (const [i, { line, prints }] of snippets.entries()) {
      const { stdout, stderr } = await run(resolve(ROOT, "node_modules/.bin/tsx"), ["--import", clock, files[i]], {
        cwd: project.dir,
        env: cleanEnv(),
        timeout: 60_000,
      });
      const printed = stdout.split("\n").filter((l) => PRINTED_VALUE.test(l));
      expect({ line, printed, stderr }).toEqual({ line, printed: prints, stderr: "" });
    }
  }, 180_000);
});

/** Writes each snippet as a module of the scratch project; returns their paths, in order. */
async function writeSnippets(dir: string, codes: string[]): Promise<string[]> {
  await mkdir(join(dir, "snippets"), { recursive: true });
  return Promise.all(
    codes.map(async (code, i) => {
      const file = join(dir, "snippets", `snippet-${i + 1}.ts`);
      await writeFile(file, code);
      return file;
    }),
  );
}
