import type { LearnedTemplate, Trajectory } from "./induce";
import { weigh } from "./evidence";

/** The finish reason of an answer the model gave that was not stored: no template's answer has it, so none is confirmed by it. */
const UNSTORED = "muscle-mem:unstored";

/**
 * What an answer the model gave a declared request, but that could not be stored in the declared tree
 * (declared.ts unstoredAnswerOf), says about the learned templates that fit the request: the model
 * answered it otherwise than any of them renders (their answers were stored), so each is weighed against
 * it as a counter-example: refuted when it would have served the request, fenced when it fits only
 * outside what it serves; never confirmed. Returns the templates whose state changed. Pure.
 *
 * `t`: the request (its tree, path and messages in hash form), as learning sees a recording's.
 */
export function weighUnstored(candidates: readonly LearnedTemplate[], t: Pick<Trajectory, "root" | "hashes" | "messages">): LearnedTemplate[] {
  const counter: Trajectory = {
    ...t,
    answer: { role: "assistant", content: "" },
    meta: { finishReason: UNSTORED, promptTokens: 0, completionTokens: 0, latencyMs: 0 },
  };
  return candidates.flatMap((template) => {
    const { outcome, state } = weigh(template, counter);
    return outcome === "refuted" || outcome === "fenced" ? [{ ...template, state }] : [];
  });
}
