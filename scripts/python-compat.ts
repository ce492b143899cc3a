/**
 * `npm run test:python`: the refund desk through the official Python clients (openai, anthropic,
 * google-genai at the versions pinned in scripts/python-compat/requirements.txt, in a virtualenv this script
 * makes at .venv-compat), against `wrangler dev` with scripted upstreams on loopback. Per API: a first run
 * (every call a miss), a repeat (every call a hit) and the repeat through the streaming helpers (every call a
 * hit); and a Responses run chained by `previous_response_id`, twice. Then the client behaviours of
 * scripts/python-compat/clients.py (raw and streaming responses, async clients, streaming helpers), each a miss
 * then a hit with the same content, and those of clients2.py (structured output, extras, bypasses, single flight,
 * a 429, Responses events, Python's JSON spellings, count_tokens, chats, automatic function calling), and
 * templates.py's: per API, three orders teach a template that serves a fourth order (new id and amount) whole,
 * through the plain client and the streaming helpers (Responses with store=False). Prints one
 * line per check and `N passed, N failed`; exits 1 when a check fails. `npm run test:python -- clients,clients2`
 * runs only the latter (any comma-separated subset of the names; `templates` for the templates' checks).
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

/** Whether a request asks for structured output (`response_format` / Responses' `text.format`: a JSON schema). */
function wantsJson(format: unknown): boolean {
  return (format as { type?: string } | undefined)?.type === "json_schema";
}

/**
 * A structured answer for clients2.py's parse checks: the order named in the request, as a model writes JSON
 * (spaces after separators, `1.0` for a whole float, a non-ASCII note escaped as Python's json.dumps would).
 */
function orderJson(request: unknown): string {
  const orderId = /#([A-Z]-\d+)/.exec(JSON.stringify(request))?.[1] ?? "unknown";
  return `{"order_id": "${orderId}", "status": "shipped", "amount": 1.0, "note": "caf\\u00e9 \u2713"}`;
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

/** What each run must show: every call a miss the first time, a hit on each repeat, a template's hit for a new order (templates.py). */
function expected(run: Run): string {
  if (run.name.includes(" template")) return "template";
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
  // clients2.py's: the first call of gpt-py-429 answers 429 with retry-after (its client does not retry).
  let rateLimits = 1;
  const chat = await startScriptedModel({
    script: (body) => {
      if (wantsJson(body.response_format)) return { role: "assistant", content: orderJson(body.messages) };
      if (body.model === "gpt-py-429" && rateLimits > 0) {
        rateLimits--;
        return {
          status: 429,
          headers: { "retry-after": "1" },
          body: { error: { message: "slow down", type: "requests", code: "rate_limit_exceeded", param: null } },
        };
      }
      if (body.model !== "gpt-py-retry" || retryFailures === 0) return refundDeskScript(body);
      retryFailures--;
      return { status: 503, body: { error: { message: "the scripted model is overloaded", type: "server_error", code: null, param: null } } };
    },
  });
  const anthropic = await startScriptedAnthropic({
    script: (body) => {
      const format = (body.output_config as { format?: unknown } | undefined)?.format;
      return wantsJson(format) ? { content: [{ type: "text", text: orderJson(body.messages) }] } : anthropicRefundDesk(body);
    },
  });
  const gemini = await startScriptedGeminiModel({
    script: (body) => {
      const config = body.generationConfig as { responseSchema?: unknown; responseJsonSchema?: unknown } | undefined;
      return config?.responseSchema || config?.responseJsonSchema ? { parts: [{ text: orderJson(body.contents) }] } : geminiRefundDesk(body);
    },
  });
  const responses = await startScriptedResponsesModel({
    script: (body) =>
      wantsJson((body.text as { format?: unknown } | undefined)?.format) ? { output: [{ text: orderJson(body.input) }] } : responsesRefundDesk(body),
  });
  // Chat and Responses share UPSTREAM_BASE_URL: one Worker for each.
  const main = await startWranglerDev({ vars: { UPSTREAM_BASE_URL: chat.url, ANTHROPIC_BASE_URL: anthropic.url, GEMINI_BASE_URL: gemini.url } });
  const second = await startWranglerDev({ vars: { UPSTREAM_BASE_URL: responses.url } });
  let passed = 0;
  let failed = 0;
  try {
    const apis = (process.argv[2] ?? "chat,anthropic,gemini,responses-chained,clients,clients2,templates").split(",");
    const prefix = `sk-py-${Date.now().toString(36)}`;
    const env = { ...process.env, NO_PROXY: "127.0.0.1,localhost" };
    // Asynchronously: the scripted upstreams answer from this process's event loop.
    const runs = [];
    const agentApis = apis.filter((a) => !a.startsWith("clients") && a !== "templates");
    if (agentApis.length) runs.push([join(HERE, "agent.py"), main.url, second.url, prefix, agentApis.join(",")]);
    if (apis.includes("clients")) runs.push([join(HERE, "clients.py"), main.url, second.url, prefix]);
    if (apis.includes("clients2")) runs.push([join(HERE, "clients2.py"), main.url, second.url, prefix]);
    if (apis.includes("templates")) runs.push([join(HERE, "templates.py"), main.url, second.url, prefix, "chat,anthropic,gemini,responses,responses-stored"]);
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
