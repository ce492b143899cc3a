/**
 * What parsing and keying a chat miss costs, in node, stage by stage, on the shipped workloads' bodies
 * (test/fixtures/workloads): reading the body (JSON.parse, the exact-JSON scan, the schema: parseJsonText),
 * the adapter's key (frame, canonical messages, path hashes), the request memo's lookup and entry, and the
 * recording built from the model's answer. Each request is a miss (a
 * unique last user message, so the request memo never has it), its conversation's earlier messages already
 * seen by the isolate (the per-step memo warm), as a Worker serving an agent sees them.
 *
 *   npx tsx bench/parse-key.ts [rounds=5] [baseline checkout, e.g. /work/main]
 *
 * With a baseline checkout, both run in one process, interleaved request by request, and the table gives
 * this checkout's CPU per stage as a ratio of the baseline's; the keys of every request are compared too
 * (they must be identical).
 */
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { z } from "zod";
import { readWorkload, requestsOf, SHIPPED_WORKLOADS } from "../tools/workloads";

// workerd forbids code generation from strings, so zod runs there without its `new Function` fast path:
// the bench does the same (zod's config is one object on globalThis, shared with a baseline's copy).
if (process.env.MM_ZOD_JIT !== "on") z.config({ jitless: true });

type Stage = "read" | "key" | "memo" | "recording";
const STAGES: Stage[] = ["read", "key", "memo", "recording"];

interface Impl {
  name: string;
  run: (raw: string, answer: string) => { times: Record<Stage, number>; key: string };
}

/** The CPU microseconds `fn` takes (user + system). */
function cpu<T>(fn: () => T): [T, number] {
  const start = process.cpuUsage();
  const out = fn();
  const used = process.cpuUsage(start);
  return [out, used.user + used.system];
}

async function load(root: string, name: string): Promise<Impl> {
  const mod = async <T>(path: string): Promise<T> => (await import(pathToFileURL(resolve(root, path)).href)) as T;
  const { parseJsonText } = await mod<typeof import("../src/core/body")>("src/core/body.ts");
  const { chatAdapter } = await mod<typeof import("../src/providers/chat/adapter")>("src/providers/chat/adapter.ts");
  const { RequestMemo, recordingHeaders, requestMemoKey } = await mod<typeof import("../src/engine/request-memo")>("src/engine/request-memo.ts");
  const config = {} as Parameters<typeof RequestMemo.of>[0];
  const url = new URL("https://mm.example/v1/chat/completions");
  const headers = new Headers({ "content-type": "application/json", authorization: "Bearer sk-bench" });
  const scope = { tenant: "t".repeat(32), namespace: "bench", maxMessageBytes: 256 * 1024 };
  return {
    name,
    run(raw, answer) {
      const times = { read: 0, key: 0, memo: 0, recording: 0 } satisfies Record<Stage, number>;
      // As src/engine/keying.ts reads a body: JSON.parse, the exact-JSON scan, the schema.
      const [parsed, read] = cpu(() => parseJsonText(raw, chatAdapter.schema));
      times.read = read;
      if (parsed.lossy !== null) throw new Error(`${name}: a workload body is lossy (${parsed.lossy})`);
      // The request memo as src/engine/keying.ts uses it on a miss: look up, key through recorded headers, keep.
      const memo = RequestMemo.of(config, chatAdapter);
      const memoKey = requestMemoKey(scope.tenant, scope.namespace, url, raw);
      const reads = new Map<string, string | null>();
      const all = { read: false };
      const [seenHeaders, lookup] = cpu(() => {
        if (memo.get(memoKey, headers)) throw new Error(`${name}: a unique request was found in the memo`);
        return recordingHeaders(headers, reads, all);
      });
      const [keyed, keyTime] = cpu(() => chatAdapter.key({ body: parsed.body, raw, url, headers: seenHeaders }, scope));
      times.key = keyTime;
      [, times.memo] = cpu(() => memo.set(memoKey, { body: parsed.body, keyed, reads: [...reads] }, all.read));
      times.memo += lookup;
      if (!keyed.ok) return { times, key: `bypass:${"bypass" in keyed ? keyed.bypass : "invalid"}` };
      const [recording, recTime] = cpu(() => chatAdapter.reader(keyed.key, { body: parsed.body, raw, url, headers }).fromJson(answer, 1));
      times.recording = recTime;
      const k = keyed.key;
      return {
        times,
        key: `${k.treeId} ${k.key} ${k.path.map((s) => s.json.length).join(",")} ${recording?.answer.hash ?? "-"} ${recording?.answer.json ?? "-"}`,
      };
    },
  };
}

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 5);
  const baseline = process.argv[3];
  const requests = [
    ...requestsOf(readWorkload("tau_bench.jsonl", Infinity, SHIPPED_WORKLOADS)),
    ...requestsOf(readWorkload("tau2_bench.jsonl", Infinity, SHIPPED_WORKLOADS)),
  ];
  const impls = [await load(resolve(import.meta.dirname, ".."), "this")];
  if (baseline) impls.unshift(await load(resolve(baseline), "baseline"));
  const totals = new Map(impls.map((impl) => [impl.name, Object.fromEntries(STAGES.map((s) => [s, 0])) as Record<Stage, number>]));
  const bytes = { total: 0 };
  // Round 0 warms the per-step memo and the JIT; rounds 1.. are measured.
  for (let round = 0; round <= rounds; round++) {
    const raws = requests.map((r, i) =>
      JSON.stringify({ ...r.body, messages: [...r.body.messages, { role: "user", content: `One more question (${round} ${i}).` }] }),
    );
    const answers = requests.map((r) =>
      JSON.stringify({
        id: "x",
        object: "chat.completion",
        choices: [{ index: 0, message: r.answer, finish_reason: r.answer.tool_calls ? "tool_calls" : "stop" }],
        usage: { prompt_tokens: 1, completion_tokens: 1 },
      }),
    );
    const keys = new Map<string, string[]>(impls.map((impl) => [impl.name, []]));
    // Request by request, in alternating order: neither side always meets the body's text first.
    for (let i = 0; i < raws.length; i++) {
      for (const impl of (round + i) % 2 === 0 ? impls : [...impls].reverse()) {
        const { times, key } = impl.run(raws[i], answers[i]);
        keys.get(impl.name)!.push(key);
        if (round > 0) for (const s of STAGES) totals.get(impl.name)![s] += times[s];
      }
    }
    if (round > 0) bytes.total += raws.reduce((n, r) => n + r.length, 0);
    if (baseline) {
      const [a, b] = [keys.get("baseline")!, keys.get("this")!];
      const differ = a.findIndex((k, i) => k !== b[i]);
      if (differ >= 0) throw new Error(`key of request ${differ} differs:\n${a[differ]}\n${b[differ]}`);
    }
  }
  const n = requests.length * rounds;
  console.log(`${requests.length} requests x ${rounds} rounds, ${(bytes.total / n / 1024).toFixed(1)} KB mean body; µs of CPU per request`);
  console.log(`| stage | ${impls.map((i) => i.name).join(" | ")}${baseline ? " | this / baseline" : ""} |`);
  console.log(`| --- | ${impls.map(() => "---").join(" | ")}${baseline ? " | ---" : ""} |`);
  for (const s of [...STAGES, "total" as const]) {
    const per = impls.map((i) => {
      const t = totals.get(i.name)!;
      return (s === "total" ? STAGES.reduce((a, x) => a + t[x], 0) : t[s]) / n;
    });
    const ratio = baseline ? ` | ${(per[1] / per[0]).toFixed(2)}` : "";
    console.log(`| ${s} | ${per.map((v) => v.toFixed(0)).join(" | ")}${ratio} |`);
  }
  if (baseline) console.log("keys, path step sizes and recorded answers: identical for every request");
}

await main();
