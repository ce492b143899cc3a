import canonicalize from "canonicalize";
import type { ChatBody, ScriptedMessage } from "../scripted-model";
import { bookingDesk } from "./booking";
import { intake } from "./intake";
import { intlDesk } from "./intl";
import { opsDesk } from "./ops";
import { payDesk } from "./pay";
import { refundDesk } from "./refund";
import { refundMail } from "./refund-mail";
import { screenDesk } from "./screen";
import { seeded, type Workflow } from "./types";

/** JSON with every non-ASCII character as a \uXXXX escape: HTTP header values are bytes. */
function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(/[\u007f-\uffff]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** The workflows of the evaluation, by model-name prefix (`wf-refund…`, `wf-intake…`, `wf-screen…`, `wf-rmail…`, `wf-book…`, `wf-intl…`, `wf-ops…`, `wf-pay…`; no prefix is another's). */
export const WORKFLOWS: Record<string, Workflow<unknown>> = {
  "wf-refund": refundDesk as Workflow<unknown>,
  "wf-intake": intake as Workflow<unknown>,
  "wf-screen": screenDesk as Workflow<unknown>,
  "wf-rmail": refundMail as Workflow<unknown>,
  "wf-book": bookingDesk as Workflow<unknown>,
  "wf-intl": intlDesk as Workflow<unknown>,
  "wf-ops": opsDesk as Workflow<unknown>,
  "wf-pay": payDesk as Workflow<unknown>,
};

/** The scripted model for an evaluation request, chosen by its model name; null for other models. */
export function evalWorkflowScript(body: ChatBody): ScriptedMessage | null {
  const prefix = Object.keys(WORKFLOWS).find((p) => body.model.startsWith(p));
  return prefix ? WORKFLOWS[prefix].script(body) : null;
}

/** Sends one chat request through the Worker. */
export type Chat = (body: unknown, headers: Record<string, string>) => Promise<Response>;

export type ServedBy = "model" | "exact" | "declared" | "learned";

interface ApiMessage {
  role: "assistant";
  content: string | null;
  tool_calls?: Array<{ id: string; type: "function"; function: { name: string; arguments: string } }>;
}

/** What a message does: its text and its tool calls (names and arguments as JSON values, key order aside); ids aside. */
function behaviour(m: { content: string | null; tool_calls?: ApiMessage["tool_calls"] }): string {
  const calls = (m.tool_calls ?? []).map((c) => [c.function.name, JSON.parse(c.function.arguments) as unknown]);
  return canonicalize([m.content ?? null, calls]) ?? "";
}

export interface RunResult {
  steps: number;
  served: Record<ServedBy, number>;
  /** Steps whose answer differs from what the model alone answers to the same messages. */
  wrong: number;
  /** Per step: how it was served and the client-side latency. */
  timings: Array<{ by: ServedBy; ms: number }>;
  /** The wrong steps: what was served and what the model answers. */
  mismatches: Array<{ by: ServedBy; served: string; truth: string }>;
}

/**
 * Runs one case as an agent would: ask, execute the tool calls against the
 * case's world, repeat. Each answer is compared with the scripted model's
 * answer to exactly the same messages (the ground truth).
 */
export async function runCase<C>(
  wf: Workflow<C>,
  c: C,
  chat: Chat,
  opts: { model: string; headers: Record<string, string>; declare: boolean },
): Promise<RunResult> {
  const messages: ChatBody["messages"] = [
    { role: "system", content: wf.system },
    { role: "user", content: wf.userMessage(c) },
  ];
  const result: RunResult = { steps: 0, served: { model: 0, exact: 0, declared: 0, learned: 0 }, wrong: 0, timings: [], mismatches: [] };
  const headers = { ...opts.headers, ...(opts.declare ? { "muscle-mem-bindings": asciiJson(wf.bindingsOf(c)) } : {}) };
  for (let step = 0; step < 8; step++) {
    const body: ChatBody = { model: opts.model, tools: wf.tools, messages: [...messages] };
    const started = performance.now();
    const res = await chat(body, headers);
    const text = await res.text();
    const ms = performance.now() - started;
    if (res.status !== 200) throw new Error(`${wf.name}: HTTP ${res.status}: ${text.slice(0, 300)}`);
    const message = (JSON.parse(text) as { choices: Array<{ message: ApiMessage }> }).choices[0].message;
    const truth = wf.script(body);
    const by: ServedBy =
      res.headers.get("muscle-mem-cache") !== "hit"
        ? "model"
        : res.headers.get("muscle-mem-template") === "declared"
          ? "declared"
          : res.headers.get("muscle-mem-template")
            ? "learned"
            : "exact";
    result.steps++;
    result.served[by]++;
    result.timings.push({ by, ms });
    if (behaviour(message) !== behaviour(truth)) {
      result.wrong++;
      result.mismatches.push({ by, served: behaviour(message), truth: behaviour(truth) });
    }
    messages.push({ role: "assistant", content: message.content, tool_calls: message.tool_calls });
    if (!message.tool_calls?.length) break;
    for (const call of message.tool_calls) {
      const output = wf.execTool(c, { name: call.function.name, args: JSON.parse(call.function.arguments) as Record<string, unknown> });
      messages.push({ role: "tool", tool_call_id: call.id, content: JSON.stringify(output) });
    }
  }
  return result;
}

/** Totals of a phase of runs. */
export interface Tally {
  runs: number;
  steps: number;
  served: Record<ServedBy, number>;
  wrongSteps: number;
  wrongRuns: number;
  timings: RunResult["timings"];
  mismatches: RunResult["mismatches"];
  /** The runs in range (Workflow.rangeOf): their steps and how many were served. */
  inRange: { runs: number; steps: number; served: number };
}

function emptyTally(): Tally {
  return {
    runs: 0,
    steps: 0,
    served: { model: 0, exact: 0, declared: 0, learned: 0 },
    wrongSteps: 0,
    wrongRuns: 0,
    timings: [],
    mismatches: [],
    inRange: { runs: 0, steps: 0, served: 0 },
  };
}

function add(t: Tally, r: RunResult, inRange = false): void {
  t.runs++;
  if (inRange) {
    t.inRange.runs++;
    t.inRange.steps += r.steps;
    t.inRange.served += r.steps - r.served.model;
  }
  t.steps += r.steps;
  for (const k of Object.keys(r.served) as ServedBy[]) t.served[k] += r.served[k];
  t.wrongSteps += r.wrong;
  if (r.wrong > 0) t.wrongRuns++;
  t.timings.push(...r.timings);
  t.mismatches.push(...r.mismatches);
}

export interface ExperimentOptions {
  /** `declared`: the client sends muscle-mem-bindings; `learned`: no bindings; `exact`: no bindings and induction off. */
  mode: "declared" | "learned" | "exact";
  warm: number;
  fresh: number;
  trapsPerKind: number;
  seed: number;
  /** Unique per experiment, so trees and upstream counts are its own. */
  tag: string;
}

/**
 * Warms the cache with a few ordinary cases, then runs new ordinary cases
 * and traps (kinds never seen while warming) interleaved, in a seeded order.
 */
export async function experiment<C>(wf: Workflow<C>, prefix: string, chat: Chat, o: ExperimentOptions): Promise<{ warm: Tally; fresh: Tally; traps: Tally }> {
  const rng = seeded(o.seed);
  const weighted = wf.kinds.flatMap(([kind, w]) => new Array<string>(w).fill(kind));
  const draw = () => weighted[Math.floor(rng() * weighted.length)];
  const model = `${prefix}-${o.mode}-${o.tag}`;
  const headers: Record<string, string> = {
    authorization: `Bearer sk-eval-${o.tag}`,
    "muscle-mem-namespace": `eval-${o.tag}-${o.mode}`,
    ...(o.mode === "exact" ? { "muscle-mem-induction": "off" } : {}),
  };
  const opts = { model, headers, declare: o.mode === "declared" };
  const out = { warm: emptyTally(), fresh: emptyTally(), traps: emptyTally() };
  const warmKinds = wf.kinds.map(([k]) => k);
  const warmCases: C[] = [];
  for (let i = 0; i < o.warm; i++) {
    const c = wf.makeCase(rng, warmKinds[i % warmKinds.length]);
    warmCases.push(c);
    add(out.warm, await runCase(wf, c, chat, opts));
  }
  const queue: Array<{ trap: boolean; kind: string }> = [
    ...Array.from({ length: o.fresh }, () => ({ trap: false, kind: draw() })),
    ...wf.traps.flatMap((kind) => Array.from({ length: o.trapsPerKind }, () => ({ trap: true, kind }))),
  ];
  for (let i = queue.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [queue[i], queue[j]] = [queue[j], queue[i]];
  }
  const seen: Array<{ cls: string; ranged: number[] }> = [];
  // In range: at least 3 earlier runs of its class (TEMPLATE_MIN_BINDINGS), each ranged value inside what they had.
  const inRange = (r: { cls: string; ranged: number[] } | undefined) => {
    if (!r) return false;
    const same = seen.filter((s) => s.cls === r.cls);
    return same.length >= 3 && r.ranged.every((v, i) => v >= Math.min(...same.map((s) => s.ranged[i])) && v <= Math.max(...same.map((s) => s.ranged[i])));
  };
  const rangeOf = (c: C) => wf.rangeOf?.(c);
  for (const c of warmCases) seen.push(rangeOf(c) ?? { cls: "", ranged: [] });
  for (const item of queue) {
    const c = wf.makeCase(rng, item.kind);
    const range = rangeOf(c);
    add(item.trap ? out.traps : out.fresh, await runCase(wf, c, chat, opts), inRange(range));
    seen.push(range ?? { cls: "", ranged: [] });
  }
  return out;
}
