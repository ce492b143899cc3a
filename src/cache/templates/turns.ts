import type { CanonicalMessage } from "../../core/messages";
import { explainInduce, type LaterAnswers, type LearnedTemplate, type Trajectory } from "./induce";
import { decomposeOnce } from "./leaves";

/**
 * Earlier turns learned from later copies (docs/templates.md "Later copies
 * count"). A run's first answers often copy little (a lookup by order id),
 * while the name and email it was given reach an answer only turns later (the
 * email to the customer, the final text). When a later turn of two runs is
 * recorded, each earlier answer of the pair is induced again with the later
 * answers of both runs as copy evidence: a value the run copies later is data
 * for the earlier turns too.
 */

/** What the tree knows of a node on a path: whether the model answered it (a recorded answer) and how. */
export interface NodeMeta {
  /** Null for a node that is no recorded answer (a user or tool message, or an answer the client wrote). */
  finishReason: string | null;
  observations: number;
  promptTokens: number;
  completionTokens: number;
  latencyMs: number;
}

/** Earlier turns considered per learning: the most recent ones (bounded work). */
export const MAX_EARLIER_TURNS = 8;

/**
 * The trajectory of the earlier turn whose answer is message `i` of `t`, or
 * null when that message is no answer the model gave (only a recorded answer
 * is evidence of what the model says).
 */
export function turnOf(t: Trajectory, i: number, meta: NodeMeta | undefined): Trajectory | null {
  const answer = t.stored?.[i] ?? t.messages[i];
  if (!answer || answer.role !== "assistant" || !meta || meta.finishReason === null || meta.observations < 1) return null;
  return {
    root: t.root,
    hashes: t.hashes.slice(0, i),
    messages: t.messages.slice(0, i),
    ...(t.stored ? { stored: t.stored.slice(0, i) } : {}),
    answer,
    meta: { finishReason: meta.finishReason, promptTokens: meta.promptTokens, completionTokens: meta.completionTokens, latencyMs: meta.latencyMs },
  };
}

/** The assistant messages of `t` after message `i`, and its answer. */
function answersAfter(t: Trajectory, i: number): CanonicalMessage[] {
  return [...t.messages.slice(i + 1).filter((m) => m.role === "assistant"), t.answer];
}

/** One earlier-turn template and the recorded answers it was induced from (their node hashes: h_{i+1} of each run). */
export interface TurnTemplate {
  turn: number;
  template: LearnedTemplate;
  answers: [string, string];
}

/**
 * The templates of the earlier turns of two runs of one shape (same skeletons
 * everywhere), each induced with the later answers of both runs as copy
 * evidence, most recent turn first, at most MAX_EARLIER_TURNS. Pure.
 */
export function induceEarlierTurns(
  a: Trajectory,
  b: Trajectory,
  metaA: readonly (NodeMeta | undefined)[],
  metaB: readonly (NodeMeta | undefined)[],
): TurnTemplate[] {
  const out: TurnTemplate[] = [];
  let considered = 0;
  for (let i = a.messages.length - 1; i > 0 && considered < MAX_EARLIER_TURNS; i--) {
    if (a.messages[i].role !== "assistant") continue;
    considered++;
    const ta = turnOf(a, i, metaA[i]);
    const tb = turnOf(b, i, metaB[i]);
    if (!ta || !tb) continue;
    const later: LaterAnswers = { a: answersAfter(a, i).map(decomposeOnce), b: answersAfter(b, i).map(decomposeOnce) };
    const induced = explainInduce(ta, tb, later);
    if ("template" in induced) out.push({ turn: i, template: induced.template, answers: [a.hashes[i], b.hashes[i]] });
  }
  return out;
}
