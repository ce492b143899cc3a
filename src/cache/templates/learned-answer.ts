import type { StoredAnswer } from "../../core/answer";
import { canonicalJson } from "../../core/canonical";
import { childHash } from "../../core/hash";
import type { RequestKey } from "../request-key";
import { hashForm } from "./declared";
import type { LearnedTemplate } from "./induce";
import { lookupKeys, skeletonDigests } from "./learned";
import { decompose, type Decomposed } from "./leaves";
import { serveLearned } from "./serve";

/** Messages before the last this many are not decomposed: no template anchors that deep in the past. */
const DECOMPOSED_TAIL = 64;

/** What a learned-template lookup reads for a request: the lookup keys (one per anchor), and its messages decomposed. */
export interface LearnedLookup {
  keys: string[];
  parts: Decomposed[];
}

/**
 * The lookup keys under which templates that might serve `key` are stored,
 * and the request's messages decomposed for matching. Pure.
 *
 * @example const { keys, parts } = learnedLookup(key); // then read the templates under `keys`
 */
export function learnedLookup(key: RequestKey): LearnedLookup {
  const messages = key.path.map((step) => hashForm(step.message));
  const parts = messages.map((m, i) => (i < messages.length - DECOMPOSED_TAIL ? { skeleton: "", leaves: [] } : decompose(m)));
  const keys = lookupKeys(key.treeId, key.path.map((s) => s.hash), skeletonDigests(parts));
  return { keys: keys.map((k) => k.key), parts };
}

/**
 * The answer learned templates give `key` on an exact miss, as a stored
 * answer under h_n (observations: the template's bindings), or null. Served
 * only when every confirmed candidate that fits renders the same answer: two
 * that disagree are a miss (serveLearned). Pure.
 */
export function learnedAnswer(key: RequestKey, lookup: LearnedLookup, candidates: readonly LearnedTemplate[], minBindings: number): { answer: StoredAnswer; template: string } | null {
  const chosen = serveLearned(candidates, lookup.parts, minBindings);
  if (!chosen) return null;
  const { message, template } = chosen;
  const a = template.pattern.answer;
  const answer: StoredAnswer = { hash: childHash(key.key, canonicalJson(message)), message, observations: template.state.bindings.length, finishReason: a.finishReason, promptTokens: a.promptTokens, completionTokens: a.completionTokens, latencyMs: a.latencyMs };
  return { answer, template: template.id };
}
