import { canonicalJson } from "../../src/core/canonical";
import { chatRequest, type CanonicalMessage } from "../../src/core/messages";
import { distinctValues, type Bindings } from "../../src/cache/templates/bindings";
import { derivedForms, hashForm, withDeclared } from "../../src/cache/templates/declared";
import { explainInduce, type Trajectory } from "../../src/cache/templates/induce";
import { decomposeOnce, type Decomposed } from "../../src/cache/templates/leaves";
import { keyAnswer, keyRequest } from "../../src/providers/chat/key";
import type { ChatBody, ScriptedMessage } from "../scripted-model";
import { applyRenaming } from "./rename";

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

/**
 * Why a declared request found no declared answer to serve: keyed concretely (declared.ts declaredKeying
 * refuses the values), its answer could not be stored in the declared tree (it holds a value the request
 * does not, or a derived form of a bound value: declared.ts abstractAnswer), or its declared key differs
 * from the first run's (a value it does not declare differs).
 */
export function whyNotDeclared(body: ChatBody, truth: ScriptedMessage, bindings: Bindings | null, namespace: string): string {
  if (!bindings) return "nothing to declare in the request";
  const keyed = keyRequest(chatRequest.parse(body), "Bearer sk-eval-tau", namespace);
  if (!keyed.ok) return "not keyed";
  const key = withDeclared(keyed.key, bindings);
  if (!key) return distinctValues(bindings) ? "keyed concretely (placeholder-like text)" : "keyed concretely: one declared value contains another";
  if (!keyAnswer(key, truth as never)) {
    const derived = derivedOf(truth, bindings);
    return derived
      ? `declared answer not storable: it holds a derived form of a bound <${derived}> (a name in a user id, digits of an id)`
      : "declared answer not storable: it holds a number, id, email or date the request does not";
  }
  return "declared key differs from the first run's: an undeclared value differs";
}

/** The kind (binding name less its ordinal) of a bound value whose derived form (declared.ts derivedForms) is a word of the answer outside its whole occurrences, or null. */
function derivedOf(answer: ScriptedMessage, bindings: Bindings): string | null {
  const texts = [answer.content ?? "", ...(answer.tool_calls ?? []).map((c) => c.function.arguments)];
  for (const [name, value] of Object.entries(bindings)) {
    const forms = derivedForms(value);
    const rest = texts.map((t) => applyRenaming(t, [{ name: "v", kind: "user", original: value, fresh: " " }])).join(" ");
    if ((rest.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).some((w) => forms.has(w))) return name.replace(/_\d+$/, "");
  }
  return null;
}
