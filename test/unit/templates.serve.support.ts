import { walk } from "../../src/core/hash";
import type { CanonicalMessage } from "../../src/core/messages";
import { weigh } from "../../src/cache/templates/evidence";
import { induce, type LearnedTemplate, type Trajectory } from "../../src/cache/templates/induce";
import { decompose } from "../../src/cache/templates/leaves";
import { lookupKeys, skeletonDigests } from "../../src/cache/templates/learned";
import { explainLearned, serveLearned } from "../../src/cache/templates/serve";

export const ROOT = "root";
const meta = { finishReason: "stop", promptTokens: 10, completionTokens: 2, latencyMs: 50 };

/** A one-question conversation and the model's answer. */
export function ask(system: string, question: string, answer: string): Trajectory {
  const messages: CanonicalMessage[] = [
    { role: "system", content: system },
    { role: "user", content: question },
  ];
  return { root: ROOT, hashes: walk(ROOT, messages).map((s) => s.hash), messages, answer: { role: "assistant", content: answer }, meta };
}

/** Learns from the trajectories in order, as the learner does (induce from the first two, weigh the rest). */
export function learnAll(ts: readonly Trajectory[]): LearnedTemplate | null {
  const t = induce(ts[0], ts[1]);
  if (!t) return null;
  for (const other of ts.slice(2)) t.state = weigh(t, other).state;
  return t;
}

/** What a learned template serves for a request, the way the Worker serves it (serveLearned); null for a miss. */
export function served(t: LearnedTemplate | null, request: Trajectory, minBindings = 3): CanonicalMessage | null {
  if (!t) return null;
  const parts = request.messages.map(decompose);
  const keys = lookupKeys(ROOT, request.hashes, skeletonDigests(parts)).map((x) => x.key);
  if (!keys.includes(t.lookupKey)) return null;
  return serveLearned([t], parts, minBindings)?.message ?? null;
}

/** What the template learned from `train` serves `request` (null: a miss) beside what the model answered: a wrong replay shows as two different contents. */
export function wrongOrMiss(train: readonly Trajectory[], request: Trajectory): { served: unknown; model: unknown } {
  const got = served(learnAll(train), request);
  return { served: got === null ? null : got.content, model: request.answer.content };
}

/** Why the template learned from `train` does not serve `request` (explainLearned's first reason). */
export function reasonFor(train: readonly Trajectory[], request: Trajectory): string | undefined {
  const t = learnAll(train);
  const outcome = t && explainLearned([t], request.messages.map(decompose), 3);
  return outcome && "reasons" in outcome ? outcome.reasons[0] : undefined;
}
