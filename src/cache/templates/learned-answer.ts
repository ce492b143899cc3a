import type { StoredAnswer } from "../../core/answer";
import { canonicalJson } from "../../core/canonical";
import { childHash } from "../../core/hash";
import type { RequestKey } from "../request-key";
import { hashForm } from "./declared";
import type { LearnedTemplate } from "./induce";
import { lookupKeys, skeletonDigests } from "./learned";
import { decompose, type Decomposed } from "./leaves";
import { tiedWords } from "./name-ties";
import { explainLearned } from "./serve";

/** Messages before the last this many are not decomposed: no template anchors that deep in the past. */
const DECOMPOSED_TAIL = 64;

/** What a learned-template lookup reads for a request: the lookup keys (one per anchor), and its messages decomposed. */
export interface LearnedLookup {
  keys: string[];
  parts: Decomposed[];
  /** The words the request ties to an identity (name-ties.ts), computed when a word slot asks. */
  tied: () => ReadonlySet<string>;
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
  const keys = lookupKeys(
    key.treeId,
    key.path.map((s) => s.hash),
    skeletonDigests(parts),
  );
  let tied: ReadonlySet<string> | undefined;
  return { keys: keys.map((k) => k.key), parts, tied: () => (tied ??= tiedWords(messages)) };
}

/** Why a lookup that read more live templates than it tries does not serve (followed by how many it tries). */
export const TOO_MANY_TEMPLATES = "more live templates here than a lookup tries";

/**
 * The answer learned templates give `key` on an exact miss, as a stored
 * answer under h_n (observations: the template's bindings), or why none
 * does (`miss`: the nearest template's reason, one line; absent when no
 * template matched the request's shape). Served only when every confirmed
 * candidate that fits renders the same answer: two that disagree are a miss
 * (explainLearned). `candidates`: every live template under the lookup keys,
 * read with a bound of `maxTried + 1`; more than `maxTried` is a miss, since
 * one not read might render another answer (docs/templates.md "Cost"). Pure.
 */
export function learnedOutcome(
  key: RequestKey,
  lookup: LearnedLookup,
  candidates: readonly LearnedTemplate[],
  minBindings: number,
  maxTried = Number.POSITIVE_INFINITY,
): { answer: StoredAnswer; template: string } | { miss?: string } {
  if (candidates.length > maxTried) return { miss: `${TOO_MANY_TEMPLATES} (${maxTried}): one not read might answer otherwise` };
  const chosen = explainLearned(candidates, lookup.parts, minBindings, lookup.tied);
  if ("reasons" in chosen) return chosen.reasons.length > 0 ? { miss: chosen.reasons[0] } : {};
  const { message, template } = chosen;
  const a = template.pattern.answer;
  const answer: StoredAnswer = {
    hash: childHash(key.key, canonicalJson(message)),
    message,
    observations: template.state.bindings.length,
    finishReason: a.finishReason,
    promptTokens: a.promptTokens,
    completionTokens: a.completionTokens,
    latencyMs: a.latencyMs,
  };
  return { answer, template: template.id };
}

/** learnedOutcome's answer, or null for a miss. */
export function learnedAnswer(
  key: RequestKey,
  lookup: LearnedLookup,
  candidates: readonly LearnedTemplate[],
  minBindings: number,
  maxTried = Number.POSITIVE_INFINITY,
): { answer: StoredAnswer; template: string } | null {
  const outcome = learnedOutcome(key, lookup, candidates, minBindings, maxTried);
  return "answer" in outcome ? outcome : null;
}
