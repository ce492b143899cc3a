/** A recorded answer at a node, as the policy sees it. */
export interface AnswerCandidate {
  observations: number;
}

export type PolicyName = "unanimous" | "majority";

export interface ServePolicy {
  name: PolicyName;
  /** The least number of observations the served answer needs. */
  minObservations: number;
}

export const DEFAULT_POLICY: ServePolicy = { name: "unanimous", minObservations: 1 };

/**
 * Chooses which recorded answer to serve, or null to ask the model.
 *
 * - `unanimous` (default): serve only when every recorded answer at the node
 *   is the same one and it has at least `minObservations` observations. Once
 *   the model has answered a prefix two different ways, the node goes back to
 *   the model.
 * - `majority`: serve the most observed answer when it has at least
 *   `minObservations` observations and more than half of all observations.
 *
 * @example choose([{ observations: 2 }], DEFAULT_POLICY) // => 0
 */
export function choose(answers: readonly AnswerCandidate[], policy: ServePolicy): number | null {
  if (answers.length === 0) return null;
  let best = 0;
  let total = 0;
  for (let i = 0; i < answers.length; i++) {
    total += answers[i].observations;
    if (answers[i].observations > answers[best].observations) best = i;
  }
  const top = answers[best].observations;
  if (top < policy.minObservations) return null;
  if (policy.name === "unanimous") return answers.length === 1 ? best : null;
  return top * 2 > total ? best : null;
}
