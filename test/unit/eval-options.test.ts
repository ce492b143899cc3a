import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { parseEvalOptions } from "../../tools/eval-workflows/options";

/**
 * `npm run eval:templates`' options (tools/eval-workflows/options.ts): a bad value is one line of usage, not a
 * stack trace. Before, `--api bogus` threw from the script's top level and node printed the stack.
 */
describe("eval:templates options", () => {
  it("Should read the defaults and each option", () => {
    expect(parseEvalOptions([])).toEqual({ warm: 8, fresh: 80, trapsPerKind: 5, seed: 42, only: null, sim: false, api: "chat" });
    expect(parseEvalOptions(["--fresh", "40", "--traps", "2", "--seed", "7", "--api", "anthropic", "--only", "wf-ops,wf-pay"])).toEqual({
      warm: 8,
      fresh: 40,
      trapsPerKind: 2,
      seed: 7,
      only: ["wf-ops", "wf-pay"],
      sim: false,
      api: "anthropic",
    });
  });

  it("Should say in one line what is wrong with a bad value", () => {
    expect(parseEvalOptions(["--api", "bogus"])).toEqual({ error: "--api bogus: not one of chat, anthropic, responses, gemini" });
    expect(parseEvalOptions(["--sim", "--api", "gemini"])).toEqual({
      error: "--sim simulates Chat Completions only: run --api gemini without --sim (under wrangler dev)",
    });
    expect(parseEvalOptions(["--fresh", "many"])).toEqual({ error: "--fresh many: not a whole number" });
    const unknown = parseEvalOptions(["--apis", "chat"]);
    expect("error" in unknown && unknown.error).toMatch(/^Unknown option '--apis'/);
    expect("error" in unknown && unknown.error).not.toContain("\n");
  });

  it("Should stop the script with exit code 2 and the usage, no stack trace, on a bad --api", () => {
    const run = spawnSync(process.execPath, ["--import", "tsx", "scripts/eval-templates.ts", "--api", "bogus"], { encoding: "utf8", timeout: 60_000 });
    expect(run.status).toBe(2);
    expect(run.stderr.trim().split("\n")).toEqual([
      "eval:templates: --api bogus: not one of chat, anthropic, responses, gemini",
      "usage: npm run eval:templates -- [--warm N] [--fresh N] [--traps N] [--seed N] [--only PREFIXES] [--sim] [--api chat|anthropic|responses|gemini]",
    ]);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });
});
