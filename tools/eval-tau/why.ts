import { canonicalJson } from "../../src/core/canonical";
import { chatRequest, type CanonicalMessage } from "../../src/core/messages";
import { hashForm } from "../../src/cache/templates/declared";
import { explainInduce, type Trajectory } from "../../src/cache/templates/induce";
import { decomposeOnce, type Decomposed } from "../../src/cache/templates/leaves";
import { keyAnswer, keyRequest } from "../../src/providers/chat/key";
import type { ChatBody, ScriptedMessage } from "../scripted-model";

/**
 * Why a learned template does not reach a request: the reason the template rules give
 * (src/cache/templates/induce.ts explainInduce) for not generalising it with the same request of the
 * first renaming, which differs from it only in renamed values. The Worker's own miss header says only
 * that no template matched; this says why none was learned.
 */
export function trajectoryOf(body: ChatBody, truth: ScriptedMessage, namespace: string): Trajectory | null {
  const keyed = keyRequest(chatRequest.parse(body), "Bearer sk-eval-tau", namespace);
  if (!keyed.ok) return null;
  const { key } = keyed;
  const recorded = keyAnswer(key, truth as never);
  if (!recorded) return null;
  return {
    root: key.treeId,
    hashes: key.path.map((s) => s.hash),
    messages: key.path.map((s) => hashForm(s.message)),
    stored: key.path.map((s) => s.message),
    answer: JSON.parse(canonicalJson(recorded.message)) as CanonicalMessage,
    meta: { finishReason: truth.tool_calls?.length ? "tool_calls" : "stop", promptTokens: 10, completionTokens: 5, latencyMs: 50 },
  };
}

/** The answers after message `i` of a run's last request (its later turns and its answer), decomposed: the copy evidence of earlier turns. */
function answersAfter(last: Trajectory | null, i: number): Decomposed[] {
  if (!last) return [];
  return [...last.messages.slice(i + 1).filter((m) => m.role === "assistant"), last.answer].map(decomposeOnce);
}

/**
 * The template rules' reason for not generalising two runs of one request, or `induces` when they would;
 * with the later answers of both runs (their last requests `lastA`, `lastB`) as copy evidence, as learning
 * has them once the runs are over (src/cache/templates/turns.ts induceEarlierTurns).
 */
export function whyNotLearned(a: Trajectory | null, b: Trajectory | null, lastA: Trajectory | null = null, lastB: Trajectory | null = null): string {
  if (!a || !b) return "not keyed";
  const i = a.messages.length;
  const result = explainInduce(a, b, { a: lastA === a ? [] : answersAfter(lastA, i), b: lastB === b ? [] : answersAfter(lastB, i) });
  return "template" in result ? "induces (then: not yet confirmed by 3 bindings, or refuted)" : result.reason;
}
