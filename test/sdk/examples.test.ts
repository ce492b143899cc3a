import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, "../..");

/** Runs an example with tsx, as the docs tell users to. */
async function example(file: string): Promise<string> {
  const env = { ...process.env };
  delete env.MUSCLE_MEM_URL;
  const { stdout } = await run(resolve(ROOT, "node_modules/.bin/tsx"), [`examples/${file}`], { cwd: ROOT, env, timeout: 60_000 });
  return stdout;
}

describe("examples/ run under tsx", () => {
  it("Should print miss, hit, miss for the greeter, with the nine hellos of each run, as the original README does", async () => {
    const out = await example("sdk-greeter.ts");
    const hits = [...out.matchAll(/cache hit: (\w+)/g)].map((m) => m[1]);
    expect(hits).toEqual(["false", "true", "false"]);
    const nine = Array.from({ length: 9 }, (_, i) => `hello erik + ${i}`);
    expect([...out.matchAll(/hello (erik \+ \d)/g)].map((m) => `hello ${m[1]}`)).toEqual([...nine, ...nine, ...nine]);
    expect(out.match(/\(agent running\)/g)).toHaveLength(2); // the hit ran without the agent
  });

  it("Should replay the computer-use example with its decorated click tool", async () => {
    const hits = [...(await example("sdk-computer-use.ts")).matchAll(/hit: (\w+), replayed: (\d+)/g)].map((m) => `${m[1]}/${m[2]}`);
    expect(hits).toEqual(["false/0", "true/6", "false/1", "true/6", "true/6"]);
  });
});
