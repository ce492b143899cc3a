/**
 * `npm run test:python`: the refund desk through the official Python clients (openai, anthropic,
 * google-genai at the versions pinned in scripts/python-compat/requirements.txt, in a virtualenv this script
 * makes at .venv-compat), against `wrangler dev` with scripted upstreams on loopback. Per API: a first run
 * (every call a miss), a repeat (every call a hit) and the repeat through the streaming helpers (every call a
 * hit); and a Responses run chained by `previous_response_id`, twice. Prints one line per check and
 * `N passed, N failed`; exits 1 when a check fails.
 */
import { execFile, execFileSync, spawnSync } from "node:child_process";
import { promisify } from "node:util";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { anthropicRefundDesk, startScriptedAnthropic } from "../tools/scripted-anthropic";
import { geminiRefundDesk, startScriptedGeminiModel } from "../tools/scripted-gemini-model";
import { refundDeskScript } from "../tools/refund-desk";
import { startScriptedModel } from "../tools/scripted-model";
import { responsesRefundDesk, startScriptedResponsesModel } from "../tools/scripted-responses-model";
import { startWranglerDev } from "../test/support/wrangler-dev";

const ROOT = resolve(import.meta.dirname, "..");
const VENV = join(ROOT, ".venv-compat");
const PYTHON = join(VENV, "bin/python");
const HERE = join(ROOT, "scripts/python-compat");

/** Makes the virtualenv and installs the pinned clients, unless it already holds them. */
function ensureVenv(): void {
  if (!existsSync(PYTHON)) execFileSync("python3", ["-m", "venv", VENV], { stdio: "inherit" });
  const check = spawnSync(
    PYTHON,
    ["-c", "import openai, anthropic, google.genai; print(openai.__version__, anthropic.__version__, google.genai.__version__)"],
    { encoding: "utf8" },
  );
  if (check.status === 0 && check.stdout.trim() === "3.22.1 1.13.0 2.25.0") return;
  // No retries on an index this machine cannot reach: pip goes on to the ones it can (the machine's own mirror).
  execFileSync(join(VENV, "bin/pip"), ["install", "-q", "--retries", "0", "--timeout", "10", "-r", join(HERE, "requirements.txt")], { stdio: "inherit" });
}

interface Run {
  name: string;
  outcomes: string[];
  final: string;
}

/** What each run must show: every call a miss the first time, a hit on each repeat. */
function expected(run: Run): string {
  return run.name.endsWith("first") ? "miss" : "hit";
}

async function main(): Promise<void> {
  ensureVenv();
  const chat = await startScriptedModel({ script: refundDeskScript });
  const anthropic = await startScriptedAnthropic({ script: anthropicRefundDesk });
  const gemini = await startScriptedGeminiModel({ script: geminiRefundDesk });
  const responses = await startScriptedResponsesModel({ script: responsesRefundDesk });
  // Chat and Responses share UPSTREAM_BASE_URL: one Worker for each.
  const main = await startWranglerDev({ vars: { UPSTREAM_BASE_URL: chat.url, ANTHROPIC_BASE_URL: anthropic.url, GEMINI_BASE_URL: gemini.url } });
  const second = await startWranglerDev({ vars: { UPSTREAM_BASE_URL: responses.url } });
  let passed = 0;
  let failed = 0;
  try {
    const apis = process.argv[2] ?? "chat,anthropic,gemini,responses-chained";
    // Asynchronously: the scripted upstreams answer from this process's event loop.
    const { stdout: out, stderr } = await promisify(execFile)(
      PYTHON,
      ["-u", join(HERE, "agent.py"), main.url, second.url, `sk-py-${Date.now().toString(36)}`, apis],
      { encoding: "utf8", timeout: 240_000, env: { ...process.env, NO_PROXY: "127.0.0.1,localhost" } },
    );
    if (stderr.trim()) console.error(stderr.slice(-4000));
    for (const line of out.split("\n").filter((l) => l.startsWith("{"))) {
      const run = JSON.parse(line) as Run;
      const want = expected(run);
      const ok = run.outcomes.length > 0 && run.outcomes.every((o) => o === want) && run.final.includes("refunded");
      console.log(`${ok ? "ok  " : "FAIL"} ${run.name}: ${run.outcomes.join(", ")}${ok ? "" : ` (expected every call ${want})`}`);
      if (ok) passed++;
      else failed++;
    }
  } finally {
    await main.stop();
    await second.stop();
    await Promise.all([chat.close(), anthropic.close(), gemini.close(), responses.close()]);
  }
  console.log(`${passed} passed, ${failed} failed`);
  if (failed > 0 || passed === 0) process.exitCode = 1;
}

await main();
