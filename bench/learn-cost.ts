/**
 * The learner's pure CPU per recorded miss (docs/performance.md, "Whose CPU a miss is": the learner's pass).
 *
 *   npx tsx bench/learn-cost.ts [baseline checkout] [rounds]     # e.g. npx tsx bench/learn-cost.ts /work/main 5
 *
 * Records the evaluation's five workflows (tools/eval-workflows, learned mode, the simulated Worker) and
 * keeps every recorded miss as the learner gets it (a RecordInput: the path's and the answer's JSON). Then
 * learns them all, in order, as src/store/templates/learn.ts does, over an in-memory copy of the tables
 * learning reads and writes (nodes, templates, observations: the same rows D1 would return, JSON text
 * included): the reads' rows parsed, the trajectory and partners built, learnStep, the writes serialised.
 * Timed with process.cpuUsage() per round, the baseline checkout's src/cache/templates modules (when given)
 * and this checkout's interleaved round by round; both must store the same template rows.
 */
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";
import type { CanonicalMessage } from "../src/core/messages";
import type { RecordInput } from "../src/core/recording";
import type { hashForm } from "../src/cache/templates/declared";
import type { LearnedTemplate, shapeKeyOf, Trajectory } from "../src/cache/templates/induce";
import type { learnStep, Partner } from "../src/cache/templates/learn-step";
import type { lookupKeys, skeletonDigests } from "../src/cache/templates/learned";
import type { decompose } from "../src/cache/templates/leaves";
import type { NodeMeta } from "../src/cache/templates/turns";
import { evalRecordings, recordOf } from "../test/support/eval-recordings";
import { uniqueMiss, type Body } from "./bodies";
import { hotSet } from "./floors";

const baseline = process.argv[2] ? resolve(process.argv[2]) : null;
const rounds = Number(process.argv[3] ?? 5);

/** The pure functions learning runs (the same names in both checkouts; typed as this checkout's own). */
interface Learning {
  hashForm: typeof hashForm;
  decompose: typeof decompose;
  lookupKeys: typeof lookupKeys;
  skeletonDigests: typeof skeletonDigests;
  shapeKeyOf: typeof shapeKeyOf;
  learnStep: typeof learnStep;
}

/** A checkout's learning, with how its learner parses a stored message's JSON and forgets what it parsed. */
type Learner = Learning & { stored: (json: string) => CanonicalMessage; hashFormOf: (json: string) => CanonicalMessage; forget: () => void };

/**
 * A checkout's learning functions, and how its learner parses a stored message's JSON (`stored`) and its
 * hash form (`hashFormOf`): src/store/templates/learn.ts's storedMessage and hashFormMessage where it has
 * them (an isolate memo), else JSON.parse each time, as before.
 */
async function learningOf(root: string): Promise<Learner> {
  const mod = (p: string) => import(pathToFileURL(`${root}/src/${p}.ts`).href);
  const names = ["declared", "leaves", "learned", "induce", "learn-step"].map((n) => `cache/templates/${n}`);
  const [declared, leaves, learned, induce, step, store] = await Promise.all([...names, "store/templates/learn"].map(mod));
  const l = { ...declared, ...leaves, ...learned, ...induce, ...step } as Learning;
  const parsing = store as {
    storedMessage?: (json: string) => CanonicalMessage;
    hashFormMessage?: (json: string) => CanonicalMessage;
    forgetParsed?: () => void;
  };
  return {
    ...l,
    forget: parsing.forgetParsed ?? (() => {}),
    stored: parsing.storedMessage ?? ((json) => JSON.parse(json) as CanonicalMessage),
    hashFormOf: parsing.hashFormMessage ?? ((json) => l.hashForm(JSON.parse(json) as CanonicalMessage)),
  };
}

/**
 * bench/profile-split.ts's misses (tau-bench bodies of 10-30 KB, one answer): `perRound` looked-up misses
 * (a new conversation each) and a fast-miss chain of as many turns, `rounds` times.
 */
function tauRecordings(rounds: number, perRound: number): RecordInput[] {
  const hot = hotSet(40);
  const answer = "Let me check that reservation for you.";
  const headers = { authorization: "Bearer sk-bench-learn" };
  const out: RecordInput[] = [];
  const add = (body: Body) => {
    const r = recordOf(body, headers, { role: "assistant", content: answer }, "stop");
    if (r) out.push(r);
  };
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < perRound; i++) add(uniqueMiss(hot[(i + round) % hot.length], `split ${round} ${i}`));
    let chain = uniqueMiss(hot[(round * 7 + 3) % hot.length], `chain ${round}`);
    for (let i = 0; i < perRound; i++) {
      if (i > 0) chain = { ...chain, messages: [...chain.messages, { role: "assistant", content: answer }, { role: "user", content: `And then? (${i})` }] };
      add(chain);
    }
  }
  return out;
}

interface TemplateRow {
  id: string;
  lookupKey: string;
  treeId: string;
  anchorDepth: number;
  pattern: string;
  state: string;
  bindings: number;
  refuted: boolean;
}

/** The tables learning reads and writes, as D1 holds them (JSON text), and learnFrom over them. */
function learner(l: Learner) {
  const nodes = new Map<string, { parent: string; json: string; depth: number; meta: NodeMeta }>();
  const templates = new Map<string, TemplateRow>();
  const byKey = new Map<string, Set<string>>();
  const observed = new Map<string, { shape: string; at: number }>();
  const byShape = new Map<string, string[]>();
  const evidence = new Set<string>();
  let clock = 0;

  /** The writer's part (not timed as learning, but inside the round: it is cheap). */
  function record(input: RecordInput): void {
    input.path.forEach((p, i) => {
      if (!nodes.has(p.hash))
        nodes.set(p.hash, {
          parent: p.parent,
          json: p.json,
          depth: i + 1,
          meta: { finishReason: null, observations: 0, promptTokens: 0, completionTokens: 0, latencyMs: 0 },
        });
    });
    const a = input.answer;
    const old = nodes.get(a.hash);
    nodes.set(a.hash, {
      parent: a.parent,
      json: old?.json ?? a.json,
      depth: input.path.length + 1,
      meta: {
        finishReason: a.finishReason,
        observations: (old?.meta.observations ?? 0) + 1,
        promptTokens: a.promptTokens,
        completionTokens: a.completionTokens,
        latencyMs: a.latencyMs,
      },
    });
  }

  function pathTo(hash: string): Array<{ hash: string; json: string; meta: NodeMeta }> {
    const out: Array<{ hash: string; json: string; meta: NodeMeta }> = [];
    for (let h: string | undefined = hash; h && nodes.has(h); h = nodes.get(h)?.parent)
      out.unshift({ hash: h, json: nodes.get(h)!.json, meta: nodes.get(h)!.meta });
    return out;
  }

  function learn(input: RecordInput): void {
    const now = ++clock;
    const t: Trajectory = {
      root: input.treeId,
      hashes: input.path.map((p) => p.hash),
      messages: input.path.map((p) => l.hashFormOf(p.json)),
      answer: JSON.parse(input.answer.json) as CanonicalMessage,
      meta: {
        finishReason: input.answer.finishReason,
        promptTokens: input.answer.promptTokens,
        completionTokens: input.answer.completionTokens,
        latencyMs: input.answer.latencyMs,
      },
    };
    const parts = t.messages.map(l.decompose);
    const keys = l.lookupKeys(t.root, t.hashes, l.skeletonDigests(parts)).map((k) => k.key);
    const shape = l.shapeKeyOf(t, parts);
    const known = [...new Set(keys.flatMap((k) => [...(byKey.get(k) ?? [])]))]
      .map((id) => templates.get(id)!)
      .filter((r) => !r.refuted)
      .sort((a, b) => b.anchorDepth - a.anchorDepth || b.bindings - a.bindings)
      .slice(0, 32)
      .map((r): LearnedTemplate => ({ id: r.id, treeId: r.treeId, lookupKey: r.lookupKey, pattern: JSON.parse(r.pattern), state: JSON.parse(r.state) }));
    const shared = new Map(t.hashes.map((h, i) => [h, t.messages[i]]));
    const partners: Partner[] = (byShape.get(shape) ?? [])
      .filter((h) => h !== input.answer.hash)
      .slice(0, 4)
      .map((h) => {
        const path = pathTo(h);
        const answer = path.pop()!;
        return {
          answerHash: h,
          nodes: path.map((p) => p.meta),
          root: t.root,
          hashes: path.map((p) => p.hash),
          messages: path.map((p) => shared.get(p.hash) ?? l.hashFormOf(p.json)),
          stored: path.map((p) => l.stored(p.json)),
          answer: l.stored(answer.json),
          meta: { finishReason: answer.meta.finishReason ?? "stop", promptTokens: 0, completionTokens: 0, latencyMs: 0 },
        };
      });
    const own = pathTo(input.answer.hash);
    own.pop();
    t.stored = own.map((p) => l.stored(p.json));
    const step = l.learnStep(
      t,
      parts,
      input.answer.hash,
      own.map((p) => p.meta),
      known,
      partners,
    );
    for (const f of step.fresh) {
      if (templates.has(f.id)) continue;
      templates.set(f.id, {
        id: f.id,
        lookupKey: f.lookupKey,
        treeId: f.treeId,
        anchorDepth: f.pattern.anchorDepth,
        pattern: JSON.stringify(f.pattern),
        state: JSON.stringify(f.state),
        bindings: f.state.bindings.length,
        refuted: f.state.refuted,
      });
      byKey.set(f.lookupKey, (byKey.get(f.lookupKey) ?? new Set()).add(f.id));
    }
    for (const u of step.updated)
      Object.assign(templates.get(u.id)!, { state: JSON.stringify(u.state), bindings: u.state.bindings.length, refuted: u.state.refuted });
    for (const e of step.evidence) evidence.add(`${e.templateId} ${e.answerHash}`);
    if (!observed.has(input.answer.hash)) {
      observed.set(input.answer.hash, { shape, at: now });
      byShape.set(shape, [input.answer.hash, ...(byShape.get(shape) ?? [])]);
    }
  }

  return {
    record,
    learn,
    count: () => templates.size,
    rows: () => JSON.stringify([[...templates.values()].sort((a, b) => a.id.localeCompare(b.id)), [...evidence].sort(), [...observed].sort()]),
  };
}

function round(l: Learner, inputs: readonly RecordInput[]): { cpuMs: number; rows: string } {
  l.forget(); // each round starts cold: the memo of parsed messages only keeps what this round learned
  const store = learner(l);
  let cpu = 0;
  for (const input of inputs) {
    store.record(input);
    const start = process.cpuUsage();
    store.learn(input);
    const used = process.cpuUsage(start);
    cpu += (used.user + used.system) / 1000;
  }
  if (process.env.MM_DEBUG) console.log("templates", store.count());
  return { cpuMs: cpu, rows: store.rows() };
}

const mine = await learningOf(resolve(import.meta.dirname, ".."));
const base = baseline ? await learningOf(baseline) : null;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`CPU ms per recording learned (median of ${rounds} rounds; the rounds after it), baseline ${baseline ?? "none"}:`);
console.log(`| workload | recordings | baseline | this checkout | ratio |`);
console.log(`| --- | --- | --- | --- | --- |`);
for (const [name, inputs] of [
  ["eval workflows (learned mode)", await evalRecordings(process.env.MM_ONLY ? { only: process.env.MM_ONLY.split(","), fresh: 30, traps: 3 } : {})],
  ["profile-split's misses (tau-bench, 2 x 60)", tauRecordings(2, 60)],
] as const) {
  round(mine, inputs); // warm-up (JIT) of both
  if (base) round(base, inputs);
  const times: { mine: number[]; base: number[] } = { mine: [], base: [] };
  const rows = { mine: "", base: "" };
  for (let r = 0; r < rounds; r++) {
    if (base) {
      const b = round(base, inputs);
      times.base.push(b.cpuMs);
      rows.base = b.rows;
    }
    const m = round(mine, inputs);
    times.mine.push(m.cpuMs);
    rows.mine = m.rows;
  }
  const per = (xs: number[]) =>
    xs.length === 0 ? "-" : `${(median(xs) / inputs.length).toFixed(3)} (${xs.map((x) => (x / inputs.length).toFixed(3)).join(" ")})`;
  const ratio = base ? (median(times.mine) / median(times.base)).toFixed(2) : "-";
  console.log(`| ${name} | ${inputs.length} | ${per(times.base)} | ${per(times.mine)} | ${ratio} |`);
  if (base && rows.mine !== rows.base) {
    console.log(`  ${name}: the stored template rows DIFFER from the baseline's`);
    process.exitCode = 1;
  }
}
if (base && process.exitCode !== 1) console.log("stored template rows, evidence and observations (shape keys): identical to the baseline's in every workload");
