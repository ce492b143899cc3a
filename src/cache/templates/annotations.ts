import type { CanonicalMessage } from "../../core/messages";

/**
 * A chat answer's `annotations` (a search model's `url_citation`) point into its text by offsets
 * (`start_index`, `end_index`) and a hit serves them as recorded. Rendered with a value of another length
 * than the one recorded, the text under them moved and the citation covered other words
 * (test/worker/templates-hunt6-annotations.test.ts): a learned template's answer with annotations is never
 * served (serve.ts), and a declared answer with annotations and a placeholder in its text is not stored
 * (declared.ts abstractAnswer).
 */

/** Why a learned template's answer with annotations is not served. */
export const ANNOTATED = "the answer's annotations point into its text by offsets: a template's answer with annotations is never served";

/** Whether a message carries annotations (an empty list, which a scripted or proxied upstream may send, is none). */
export function annotated(message: CanonicalMessage): boolean {
  const a = message.annotations;
  return a !== undefined && a !== null && !(Array.isArray(a) && a.length === 0);
}
