/**
 * `npm run test:python`: the refund desk through the official Python clients (openai, anthropic,
 * google-genai at the versions pinned in scripts/python-compat/requirements.txt, in a virtualenv this script
 * makes at .venv-compat), against `wrangler dev` with scripted upstreams on loopback. Per API: a first run
 * (every call a miss), a repeat (every call a hit) and the repeat through the streaming helpers (every call a
 * hit); and a Responses run chained by `previous_response_id`, twice. Then the client behaviours of
 * scripts/python-compat/clients.py (raw and streaming responses, async clients, streaming helpers), each a miss
 * then a hit with the same content. Prints one line per check and `N passed, N failed`; exits 1 when a check
 * fails. `npm run test:python -- clients` runs only the latter (any comma-separated subset of the names).
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

/** A client-behaviour check of clients.py: its outcomes in order, and whether the hit's content was the miss's. */
interface Check {
  name: string;
  outcomes: string[];
  expect: string[];
  same: boolean;
}

/** What each run must show: every call a miss the first time, a hit on each repeat. */
function expected(run: Run): string {
  return run.name.endsWith("first") ? "miss" : "hit";
}

/** One line's verdict: an agent run (agent.py) or a client-behaviour check (clients.py). */
function judge(line: string): { ok: boolean; text: string } {
  const parsed = JSON.parse(line) as Run | Check;
  if ("expect" in parsed) {
    const ok = parsed.same && parsed.outcomes.join() === parsed.expect.join();
    const why = parsed.same ? `expected ${parsed.expect.join(", ")}` : "the hit's content differs from the miss's";
    return { ok, text: `${parsed.name}: ${parsed.outcomes.join(", ")}${ok ? "" : ` (${why})`}` };
  }
  const want = expected(parsed);
  const ok = parsed.outcomes.length > 0 && parsed.outcomes.every((o) => o === want) && parsed.final.includes("refunded");
  return { ok, text: `${parsed.name}: ${parsed.outcomes.join(", ")}${ok ? "" : ` (expected every call ${want})`}` };
}

async function main(): Promise<void> {
  ensureVenv();
  // clients.py's retry check: the first call of model gpt-py-retry answers 503 (the client retries it).
  let retryFailures = 1;
  const chat = await startScriptedModel({
    script: (body) => {
      if (body.model !== "gpt-py-retry" || retryFailures === 0) return refundDeskScript(body);
      retryFailures--;
      return { status: 503, body: { error: { message: "the scripted model is overloaded", type: "server_error", code: null, param: null } } };
    },
  });
  const anthropic = await startScriptedAnthropic({ script: anthropicRefundDesk });
  const gemini = await startScriptedGeminiModel({ script: geminiRefundDesk });
  const responses = await startScriptedResponsesModel({ script: responsesRefundDesk });
  // Chat and Responses share UPSTREAM_BASE_URL: one Worker for each.
  const main = await startWranglerDev({ vars: { UPSTREAM_BASE_URL: chat.url, ANTHROPIC_BASE_URL: anthropic.url, GEMINI_BASE_URL: gemini.url } });
  const second = await startWranglerDev({ vars: { UPSTREAM_BASE_URL: responses.url } });
  let passed = 0;
  let failed = 0;
  try {
    const apis = (process.argv[2] ?? "chat,anthropic,gemini,responses-chained,clients").split(",");
    const prefix = `sk-py-${Date.now().toString(36)}`;
    const env = { ...process.env, NO_PROXY: "127.0.0.1,localhost" };
    // Asynchronously: the scripted upstreams answer from this process's event loop.
    const runs = [];
    const agentApis = apis.filter((a) => a !== "clients");
    if (agentApis.length) runs.push([join(HERE, "agent.py"), main.url, second.url, prefix, agentApis.join(",")]);
    if (apis.includes("clients")) runs.push([join(HERE, "clients.py"), main.url, second.url, prefix]);
    for (const args of runs) {
      const {
        stdout: out,
        stderr,
        crashed,
      } = await promisify(execFile)(PYTHON, ["-u", ...args], { encoding: "utf8", timeout: 240_000, env }).then(
        (done) => ({ ...done, crashed: false }),
        (error: { stdout?: string; stderr?: string }) => ({ stdout: error.stdout ?? "", stderr: error.stderr ?? String(error), crashed: true }),
      );
      if (stderr.trim()) console.error(stderr.slice(-4000));
      // A script that dies fails, whatever it printed before (its later checks never ran).
      if (crashed) {
        console.log(`FAIL ${args[0].slice(HERE.length + 1)} exited with an error`);
        failed++;
      }
      for (const line of out.split("\n").filter((l) => l.startsWith("{"))) {
        const { ok, text } = judge(line);
        console.log(`${ok ? "ok  " : "FAIL"} ${text}`);
        if (ok) passed++;
        else failed++;
      }
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
