import { childHash, type PathStep } from "../../core/hash";
import type { RequestKey } from "../request-key";

/**
 * Learned templates and numbers sent spelled otherwise than JSON.stringify writes them (`2.0`, `1e3`, `0.50`:
 * src/core/number-text.ts). A request step's hash reads the spelling; its stored message, which a template
 * matches and learning reads, holds the value, so `2.0` and `2` read alike there although the model may copy
 * either text. One rule for every API (docs/templates.md, "Numbers sent spelled otherwise"): a request one of
 * whose steps' hash read more than its stored message is never served from a learned template, and its
 * recording teaches nothing. Its exact node still serves it (the hash keeps the spelling).
 */

/** Why a request was not served from a learned template: a number in it was sent spelled otherwise. */
export const SPELLED_MISS = "a number in this request was sent spelled otherwise than JSON writes it (`2.0`, `1e3`): learned templates do not read it";

/**
 * Whether a request step's hash read more than `hashed`, the canonical JSON of the message a template would
 * read in its place (the spellings of its numbers: they are hashed, never stored).
 */
export function hashReadMore(step: Pick<PathStep, "hash" | "parent">, hashed: string): boolean {
  return childHash(step.parent, hashed) !== step.hash;
}

/**
 * Whether a request keyed as chat is read spellings into the hash of one of its messages (`key.numbers`, which
 * the declared key keeps): then hashReadMore holds for those steps, and templates must not read the request.
 */
export function readsSpellings(key: Pick<RequestKey, "numbers">): boolean {
  return key.numbers !== undefined && key.numbers.size > 0;
}
