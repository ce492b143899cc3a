/**
 * `npm run eval:templates`: the template evaluation under `wrangler dev`.
 * Three scripted workflows (tools/eval-workflows: a refund desk, a sign-up
 * intake, and a screening desk whose every decision rests on a value the
 * model never copies: a lookup table, a parity rule, a set membership) run
 * in three modes: exact only, learned templates only (no
 * bindings), declared variables (the client sends muscle-mem-bindings).
 * Each answer is compared with the scripted model's own answer to the same
 * messages. Options: --warm N --fresh N --traps N --seed N --only PREFIXES
 * --sim (the same rules in memory, without the Worker: for iterating; chat only).
 * --api chat|anthropic|responses|gemini (default chat): the same chat requests written in that API's
 * shape and sent to its route, behind a scripted model speaking that API (tools/eval-workflows/apis).
 */
import { startWranglerDev } from "../test/support/wrangler-dev";
import { startScriptedModel, type ChatBody } from "../tools/scripted-model";
import { simulatedWorker } from "../tools/eval-workflows/simulate";
import { experiment, WORKFLOWS, type Chat, type ServedBy, type Tally } from "../tools/eval-workflows/run";
import { apiChat, startApiUpstream } from "../tools/eval-workflows/apis/index";
import { EVAL_USAGE, parseEvalOptions } from "../tools/eval-workflows/options";

const parsed = parseEvalOptions(process.argv.slice(2));
if ("error" in parsed) {
  // A usage error is one line and the usage, not a stack trace.
  console.error(`eval:templates: ${parsed.error}\n${EVAL_USAGE}`);
  process.exit(2);
}
const api = parsed.api;
/** `--only wf-rmail,wf-book`: run only these workflows (by model-name prefix). */
const only = parsed.only ?? Object.keys(WORKFLOWS);
const opts = { warm: parsed.warm, fresh: parsed.fresh, trapsPerKind: parsed.trapsPerKind, seed: parsed.seed };

const script = (body: ChatBody) => WORKFLOWS[Object.keys(WORKFLOWS).find((p) => body.model.startsWith(p)) ?? "wf-refund"].script(body);
// `--sim`: the template rules in memory (tools/eval-workflows/simulate.ts), no Worker: seconds instead of minutes.
const simulated = parsed.sim ? simulatedWorker(script) : null;
const model = simulated || api !== "chat" ? null : await startScriptedModel({ script });
const upstream = simulated || api === "chat" ? null : await startApiUpstream(api, script);
const upstreamVars = model ? { UPSTREAM_BASE_URL: model.url } : (upstream?.vars ?? null);
const dev = upstreamVars ? await startWranglerDev({ vars: { ...upstreamVars, COUNTER_FLUSH_MS: "0" } }) : null;
/**
 * Why templates did not serve (`muscle-mem-template-miss`) in the current experiment, counted by the reason with its
 * quoted values and slot numbers left out (`slot 2 (date \`2.6.0\`)` and `slot 0 (date \`2.5.1\`)` are one reason),
 * with the first reason seen as the example.
 */
const missReasons = new Map<string, { n: number; example: string }>();
/** Another API: answers whose API form (blocks, items, parts, argument texts; ids aside) differs from the scripted model's form. */
const shapes: string[] = [];
const noteMiss = (headers: Headers) => {
  const reason = headers.get("muscle-mem-template-miss");
  if (!reason) return;
  const key = reason.replace(/`[^`]*`/g, "`…`").replace(/\d+/g, "N");
  const known = missReasons.get(key);
  missReasons.set(key, { n: (known?.n ?? 0) + 1, example: known?.example ?? reason });
};
const chat: Chat =
  simulated?.chat ??
  (api === "chat"
    ? async (body, headers) => {
        const res = await fetch(`${dev?.url}/v1/chat/completions`, {
          method: "POST",
          headers: { "content-type": "application/json", ...headers },
          body: JSON.stringify(body),
        });
        noteMiss(res.headers);
        return res;
      }
    : apiChat(api, dev?.url ?? "", {
        onHeaders: noteMiss,
        truth: script,
        onShape: (m) => shapes.push(`${m.by}: served ${m.served} but the model's form is ${m.expected}`),
      }));

const pct = (n: number, d: number) => (d === 0 ? "-" : `${((100 * n) / d).toFixed(1)}%`);
const median = (xs: number[]) => (xs.length === 0 ? NaN : [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]);
const ms = (t: Tally, by: ServedBy) => median(t.timings.filter((x) => x.by === by).map((x) => x.ms));

const rows: string[] = [];
const latency: string[] = [];
const mismatches: string[] = [];
const reasons: string[] = [];
try {
  for (const [prefix, wf] of Object.entries(WORKFLOWS).filter(([p]) => only.includes(p))) {
    for (const mode of ["exact", "learned", "declared"] as const) {
      const tag = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
      missReasons.clear();
      const r = await experiment(wf, prefix, chat, { ...opts, mode, tag });
      console.error(`${wf.name} ${mode}: done`);
      // The most frequent reasons templates did not serve (`muscle-mem-template-miss`), on every API.
      for (const { n, example } of [...missReasons.values()].sort((a, b) => b.n - a.n).slice(0, 3))
        reasons.push(`| ${wf.name} | ${mode} | ${n} | ${example} |`);
      const f = r.fresh;
      const t = r.traps;
      const served = f.served.exact + f.served.declared + f.served.learned;
      rows.push(
        `| ${wf.name} | ${mode} | ${f.runs} | ${f.steps} | ${pct(served, f.steps)} | ${f.served.exact} / ${f.served.declared} / ${f.served.learned} | ${f.inRange.runs} | ${pct(f.inRange.served, f.inRange.steps)} | ${f.wrongRuns} | ${t.runs} | ${pct(t.served.exact + t.served.declared + t.served.learned, t.steps)} | ${t.wrongRuns} |`,
      );
      // Latency per serving path, first half vs second half of the new cases (the tree grows in between).
      const half = Math.floor(f.timings.length / 2);
      const early = { ...f, timings: f.timings.slice(0, half) };
      const late = { ...f, timings: f.timings.slice(half) };
      const fmt = (x: number) => (Number.isNaN(x) ? "-" : x.toFixed(1));
      latency.push(
        `| ${wf.name} | ${mode} | ${fmt(ms(early, "exact"))} / ${fmt(ms(late, "exact"))} | ${fmt(ms(early, mode === "declared" ? "declared" : "learned"))} / ${fmt(ms(late, mode === "declared" ? "declared" : "learned"))} | ${fmt(ms(early, "learned"))} / ${fmt(ms(late, "learned"))} | ${fmt(ms(early, "model"))} / ${fmt(ms(late, "model"))} |`,
      );
      for (const m of [...r.warm.mismatches, ...f.mismatches, ...t.mismatches])
        mismatches.push(`${wf.name} ${mode} (${m.by}): served ${m.served} but the model says ${m.truth}`);
    }
  }
  // Learned templates only: declared answers' evidence rows share the table with anchor_depth -1.
  const all = simulated?.templates() ?? [];
  const templateRows = dev
    ? await dev.sql(
        "SELECT count(*) AS templates, sum(refuted) AS refuted, sum(CASE WHEN bindings >= 3 AND refuted = 0 THEN 1 ELSE 0 END) AS confirmed FROM templates WHERE anchor_depth >= 0",
      )
    : [
        {
          templates: all.length,
          refuted: all.filter((t) => t.state.refuted).length,
          confirmed: all.filter((t) => !t.state.refuted && t.state.bindings.length >= 3).length,
        },
      ];
  console.log(
    `\nTemplate evaluation${simulated ? " (--sim: in memory, no Worker)" : ""}${api === "chat" ? "" : ` on --api ${api}`}: warm ${opts.warm} cases, then ${opts.fresh} new cases and ${opts.trapsPerKind} of each trap kind, seed ${opts.seed}; TEMPLATE_MIN_BINDINGS=3, DECLARED_MIN_BINDINGS=2.\n`,
  );
  console.log(
    "| workflow | mode | new runs | model calls | served | exact / declared / learned | in-range runs | served in range | wrong runs | trap runs | traps served | wrong trap runs |",
  );
  console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
  for (const row of rows) console.log(row);
  console.log("\nMedian client latency in ms (first half / second half of the new cases):\n");
  console.log("| workflow | mode | exact hit | declared or learned hit | learned hit | model (miss) |");
  console.log("| --- | --- | --- | --- | --- | --- |");
  for (const row of latency) console.log(row);
  if (reasons.length > 0) {
    console.log(
      `\nWhy templates did not serve on --api ${api} (muscle-mem-template-miss, the 3 most frequent per row, values and numbers left out to count, the first seen shown${api === "responses" ? "; declared variables are not read on Responses" : ""}):\n`,
    );
    console.log("| workflow | mode | misses | reason |");
    console.log("| --- | --- | --- | --- |");
    for (const row of reasons) console.log(row);
  }
  if (api !== "chat")
    console.log(
      shapes.length === 0
        ? `\nAnswers in another ${api} form than the model's (ids aside): 0`
        : `\nAnswers in another ${api} form than the model's (ids aside): ${shapes.length}\n${shapes.slice(0, 10).join("\n")}`,
    );
  console.log(`\nTemplates stored: ${JSON.stringify(templateRows[0])}`);
  console.log(mismatches.length === 0 ? "\nWrong replays: 0" : `\nWrong replays:\n${mismatches.join("\n")}`);
  process.exitCode = mismatches.length === 0 ? 0 : 1;
} finally {
  await dev?.stop();
  await model?.close();
  await upstream?.close();
}
