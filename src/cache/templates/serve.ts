import { canonicalJson } from "../../core/canonical";
import { splitEnvelope } from "../../core/envelope";
import type { CanonicalMessage } from "../../core/messages";
import { ANNOTATED, annotated } from "./annotations";
import type { LearnedTemplate } from "./induce";
import { bind, derivedReason, refusal, renderAnswer, unboundReason, unconfirmedReason } from "./learned";
import type { Decomposed } from "./leaves";

/** What learned templates did for a request: the answer served, or why none did (one line per template that matched its shape, nearest first). */
export type LearnedOutcome = { message: CanonicalMessage; template: LearnedTemplate } | { reasons: string[] };

/**
 * The answer learned templates give a request (its messages decomposed), or
 * why they give none. A candidate serves only when it is confirmed by
 * `minBindings` distinct bindings, the request fits its pattern and every
 * bound value passes its slot (type, shape, range, a word tied to an
 * identity in the request: `tied`) and every two ranged slots of a type are
 * in an order seen (orders.ts); when two candidates that fit render different
 * answers, it is a miss. Pure: the Worker and the tests both serve through it.
 */
export function explainLearned(
  candidates: readonly LearnedTemplate[],
  parts: readonly Decomposed[],
  minBindings: number,
  tied: () => ReadonlySet<string> = () => new Set(),
): LearnedOutcome {
  let chosen: { json: string; message: CanonicalMessage; template: LearnedTemplate } | null = null;
  const reasons: string[] = [];
  // Why a template that fits the request's skeletons did not bind it (unboundReason): after the reasons of those that bound.
  const unbound: string[] = [];
  for (const template of candidates) {
    const suffix = parts.slice(template.pattern.anchorDepth);
    const binding = bind(template.pattern, suffix, template.state.slots.length);
    if (!binding) {
      const why = unboundReason(template.pattern, suffix);
      if (why !== null) unbound.push(why);
      continue;
    }
    const why = unconfirmedReason(template.state, minBindings) ?? refusal(template.state, binding, tied(), template.pattern);
    if (why !== null) {
      reasons.push(why);
      continue;
    }
    const message = renderAnswer(template.pattern, binding.values);
    if (!message) {
      reasons.push(derivedReason(template.pattern, binding.values) ?? "a derived value does not apply to the new value");
      continue;
    }
    if (annotated(message)) {
      reasons.push(ANNOTATED);
      continue;
    }
    // Two templates that render one message agree, whatever envelope each carries (the first one's is served).
    const json = canonicalJson(splitEnvelope(message).message);
    if (chosen && chosen.json !== json) return { reasons: ["two templates that fit render different answers"] };
    chosen ??= { json, message, template };
  }
  return chosen ? { message: chosen.message, template: chosen.template } : { reasons: [...reasons, ...unbound] };
}

/** explainLearned's answer, or null for a miss. */
export function serveLearned(
  candidates: readonly LearnedTemplate[],
  parts: readonly Decomposed[],
  minBindings: number,
  tied: () => ReadonlySet<string> = () => new Set(),
): { message: CanonicalMessage; template: LearnedTemplate } | null {
  const outcome = explainLearned(candidates, parts, minBindings, tied);
  return "message" in outcome ? outcome : null;
}
