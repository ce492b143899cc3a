import { canonicalJson } from "../../core/canonical";
import { splitEnvelope } from "../../core/envelope";
import type { CanonicalMessage } from "../../core/messages";
import type { LearnedTemplate } from "./induce";
import { bind, isConfirmed, refusal, renderAnswer } from "./learned";
import type { Decomposed } from "./leaves";

/**
 * The answer learned templates give a request (its messages decomposed), or
 * null for a miss. A candidate serves only when it is confirmed by
 * `minBindings` distinct bindings, the request fits its pattern and every
 * bound value passes its slot (type, shape, range) and every two ranged
 * slots of a type are in an order seen (orders.ts); when two candidates that
 * fit render different answers, it is a miss. Pure: the Worker and the tests
 * both serve through it.
 */
export function serveLearned(candidates: readonly LearnedTemplate[], parts: readonly Decomposed[], minBindings: number): { message: CanonicalMessage; template: LearnedTemplate } | null {
  let chosen: { json: string; message: CanonicalMessage; template: LearnedTemplate } | null = null;
  for (const template of candidates) {
    if (!isConfirmed(template.state, minBindings)) continue;
    const binding = bind(template.pattern, parts.slice(template.pattern.anchorDepth), template.state.slots.length);
    if (!binding || refusal(template.state, binding) !== null) continue;
    const message = renderAnswer(template.pattern, binding.values);
    if (!message) continue;
    // Two templates that render one message agree, whatever envelope each carries (the first one's is served).
    const json = canonicalJson(splitEnvelope(message).message);
    if (chosen && chosen.json !== json) return null;
    chosen ??= { json, message, template };
  }
  return chosen && { message: chosen.message, template: chosen.template };
}
