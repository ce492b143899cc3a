import { createHash } from "node:crypto";
import canonicalize from "canonicalize";
import { ambiguityOf, MAX_BINDINGS } from "../../src/cache/templates/bindings";
import { claimsOf } from "../../src/cache/templates/placeholders";
import { simulatedWorker, type SimulatedWorker } from "../eval-workflows/simulate";
import { seeded } from "../eval-workflows/types";
import type { ChatBody, ScriptedMessage } from "../scripted-model";
import type { WorkloadLine } from "../workloads";
import { renameLine, type RenamedLine } from "./rename";
import { trajectoryOf, whyNotDeclared, whyNotLearned } from "./why";

/**
 * Renamed runs of recorded conversations through the simulated Worker (tools/eval-workflows/simulate.ts:
 * the pure exact → declared → learned → model flow). Each line is renamed `renames` times; round r sends
 * every line's r-th renaming, request by request, as recorded (the agent's messages are the recorded
 * ones, so every request has a known true answer: the renamed recorded one). Round 0 records; later
 * rounds are counted.
 */
export type Mode = "learned" | "declared";

export interface Tally {
  /** Requests of the counted rounds (all but the first). */
  requests: number;
  served: { exact: number; declared: number; learned: number };
  /** Served answers that no recording gives the same request (canonical messages, ids aside). */
  wrong: number;
  /** Served answers that another recording (another trial) gave the same request, not this line's. */
  otherTrial: number;
  /** Why the counted misses missed (muscle-mem-template-miss, numbers and quotes folded). */
  missReasons: Map<string, number>;
  /** The last round alone: requests and served. */
  last: { requests: number; served: number };
  /** Lines whose second renaming left an original behind (RenamedLine.leaks), renamed lines counted, and lines with nothing to rename (not counted: a replay, not new data). */
  leakyLines: number;
  lines: number;
  unrenamed: number;
  mismatches: Array<{ trajectory: string; by: string; served: string; truth: string }>;
}

export interface EvalOptions {
  renames: number;
  seed: number;
  names: boolean;
  mode: Mode;
  /** Called before each round with the simulated Worker (the test plants a wrong template through it). */
  beforeRound?: (round: number, worker: SimulatedWorker) => void;
}

interface Request {
  workload: string;
  trajectory: string;
  /** The index of the answer in the line's messages. */
  index: number;
  round: number;
  body: ChatBody;
  truth: ScriptedMessage;
  bindings: Record<string, string> | null;
}

/** A number from a string (FNV-1a), to seed each line's renamings on their own. */
function hashOf(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** A request's identity for the truths map: a digest of its JSON (holding every body's text would take gigabytes on the full set). */
function bodyKey(body: ChatBody): string {
  return createHash("sha256").update(JSON.stringify(body)).digest("base64");
}

/** JSON with every non-ASCII character as a \uXXXX escape: HTTP header values are bytes. */
function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(/[\u007f-\uffff]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** What a message does, ids aside: its text (empty as none) and its tool calls with parsed arguments. */
export function behaviour(m: { content?: unknown; tool_calls?: unknown }): string {
  const calls = ((m.tool_calls as ScriptedMessage["tool_calls"]) ?? []).map((c) => {
    try {
      return [c.function.name, JSON.parse(c.function.arguments) as unknown];
    } catch {
      return [c.function.name, c.function.arguments];
    }
  });
  return canonicalize([m.content === "" ? null : (m.content ?? null), calls]) ?? "";
}

export function workloadOf(line: WorkloadLine & { source?: string; domain?: string }): string {
  return `${line.source ?? "?"} ${line.domain ?? "?"}`;
}

/** The declared bindings of a request: the renamed values it holds, at most 32, none too short or common (the client may know which). */
function bindingsOf(r: RenamedLine, messages: WorkloadLine["messages"]): Record<string, string> | null {
  const text = JSON.stringify(messages);
  const held = r.values.filter((v) => ambiguityOf(v.fresh) === null && claimsOf(text, { v: v.fresh }).length > 0);
  return held.length === 0 ? null : Object.fromEntries(held.slice(0, MAX_BINDINGS).map((v) => [v.name, v.fresh]));
}

/** The requests of a renamed line: assistant message i answers messages[:i], except the harness's scripted turns. */
function requestsOf(r: RenamedLine, round: number, declare: boolean): Request[] {
  const { line } = r;
  const scripted = new Set(line.scripted_assistant_idx ?? []);
  const out: Request[] = [];
  line.messages.forEach((m, i) => {
    if (m.role !== "assistant" || scripted.has(i) || i === 0) return;
    const messages = line.messages.slice(0, i);
    out.push({
      workload: workloadOf(line),
      trajectory: line.id,
      index: i,
      round,
      body: { model: line.model, ...(line.tools ? { tools: line.tools } : {}), messages },
      truth: m as unknown as ScriptedMessage,
      bindings: declare ? bindingsOf(r, messages) : null,
    });
  });
  return out;
}

function emptyTally(): Tally {
  return {
    requests: 0,
    served: { exact: 0, declared: 0, learned: 0 },
    wrong: 0,
    otherTrial: 0,
    missReasons: new Map(),
    last: { requests: 0, served: 0 },
    leakyLines: 0,
    lines: 0,
    unrenamed: 0,
    mismatches: [],
  };
}

/**
 * A miss reason with its values folded, so that reasons group: a quoted renamed value becomes its kind
 * (`<reservation>`), other quoted values and numbers become `…` and `N`.
 */
export function foldReason(reason: string, kinds: ReadonlyMap<string, string> = new Map()): string {
  return reason
    .replace(/"([^"]*)"|'([^']*)'|`([^`]*)`/g, (q, a, b, c) => {
      const kind = kinds.get(a ?? b ?? c);
      return kind ? `<${kind}>` : "…";
    })
    .replace(/\d+(\.\d+)?/g, "N")
    .slice(0, 140);
}

/** Runs the renamed rounds of `lines` through one fresh simulated Worker; tallies per workload. */
export async function evaluate(lines: readonly WorkloadLine[], o: EvalOptions): Promise<Map<string, Tally>> {
  const rounds: Request[][] = [];
  const tallies = new Map<string, Tally>();
  const tallyOf = (w: string) => tallies.get(w) ?? (tallies.set(w, emptyTally()).get(w) as Tally);
  /** The kind of every renamed value, original or fresh, to name them in miss reasons. */
  const kinds = new Map<string, string>();
  for (let round = 0; round < o.renames; round++) {
    rounds.push(
      lines.flatMap((line) => {
        const renamed = renameLine(line, seeded(hashOf(`${o.seed}\u0000${line.id}\u0000${round}`)), o.names);
        for (const v of renamed.values) kinds.set(v.original, v.kind).set(v.fresh, v.kind);
        if (round === 1) {
          const t = tallyOf(workloadOf(line));
          if (renamed.values.length === 0) t.unrenamed++;
          else t.lines++;
          if (renamed.leaks.length > 0) t.leakyLines++;
        }
        return renamed.values.length === 0 && round > 0 ? [] : requestsOf(renamed, round, o.mode === "declared");
      }),
    );
  }
  // Every answer recorded for a request, over all lines and rounds: another trial's answer is the model's too.
  const truths = new Map<string, Set<string>>();
  for (const r of rounds.flat()) {
    const k = bodyKey(r.body);
    truths.set(k, (truths.get(k) ?? new Set()).add(behaviour(r.truth)));
  }
  let current: ScriptedMessage | null = null;
  const worker = simulatedWorker(() => current as ScriptedMessage);
  const namespace = `tau-${o.mode}${o.names ? "-names" : ""}`;
  const headers = { authorization: "Bearer sk-eval-tau", "muscle-mem-namespace": namespace };
  const first = new Map(rounds[0].map((r) => [`${r.trajectory}\u0000${r.index}`, r]));
  // Each run's last request (the whole conversation), by line and round.
  const last = new Map(rounds.flat().map((r) => [`${r.trajectory}\u0000${r.round}`, r]));
  // Trajectories for the reasons, kept for the first renaming and for the current round only (the full set's would not fit in memory).
  const firstTrajectories = new Map<Request, ReturnType<typeof trajectoryOf>>();
  let roundTrajectories = new Map<Request, ReturnType<typeof trajectoryOf>>();
  const trajectory = (r: Request | undefined) => {
    if (!r) return null;
    const memo = r.round === 0 ? firstTrajectories : roundTrajectories;
    if (!memo.has(r)) memo.set(r, trajectoryOf(r.body, r.truth, namespace));
    return memo.get(r) ?? null;
  };
  for (const [round, requests] of rounds.entries()) {
    roundTrajectories = new Map();
    o.beforeRound?.(round, worker);
    for (const r of requests) {
      current = r.truth;
      const res = await worker.chat(r.body, r.bindings ? { ...headers, "muscle-mem-bindings": asciiJson(r.bindings) } : headers);
      const message = (JSON.parse(await res.text()) as { choices: Array<{ message: ScriptedMessage }> }).choices[0].message;
      if (round === 0) continue;
      const t = tallyOf(r.workload);
      const template = res.headers.get("muscle-mem-template");
      const hit = res.headers.get("muscle-mem-cache") === "hit";
      t.requests++;
      if (round === rounds.length - 1) t.last.requests++;
      if (!hit) {
        const header = res.headers.get("muscle-mem-template-miss");
        const base = first.get(`${r.trajectory}\u0000${r.index}`);
        // No header: no template was learned here; the template rules say why, against the first renaming.
        const why = () =>
          base
            ? whyNotLearned(
                trajectory(base),
                trajectory(r),
                trajectory(last.get(`${r.trajectory}\u00000`)),
                trajectory(last.get(`${r.trajectory}\u0000${r.round}`)),
              )
            : "no first run";
        const reason = foldReason(
          header ?? (o.mode === "learned" ? `none learned: ${why()}` : `none declared: ${whyNotDeclared(r.body, r.truth, r.bindings, namespace)}`),
          kinds,
        );
        t.missReasons.set(reason, (t.missReasons.get(reason) ?? 0) + 1);
        continue;
      }
      const by = template === "declared" ? "declared" : template ? "learned" : "exact";
      t.served[by]++;
      if (round === rounds.length - 1) t.last.served++;
      const served = behaviour(message);
      const truth = behaviour(r.truth);
      if (served === truth) continue;
      if (truths.get(bodyKey(r.body))?.has(served)) t.otherTrial++;
      else {
        t.wrong++;
        t.mismatches.push({ trajectory: `${r.trajectory}#${round}`, by, served, truth });
      }
    }
  }
  return tallies;
}
