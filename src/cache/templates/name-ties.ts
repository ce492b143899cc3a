import type { CanonicalMessage } from "../../core/messages";
import { textsOf } from "./placeholders";

/**
 * Closed-class words versus names (docs/templates.md "Words: closed-class
 * unless tied to an identity").
 *
 * A value of letters only (`Delivered`, `starter`, `US`, `Lisbon`, `Ada`) may
 * be a word the model decides on: a status, a plan, a country, a place, a
 * category, from a small vocabulary. Capitalisation is no evidence either
 * way. Such a word becomes a slot only when the request itself ties it to an
 * identity, in every binding that teaches, confirms or is served:
 *
 * - its letters, case aside, are a run of letters (at least 3) of the local
 *   part of an email the request holds (`Ada` in `ada42@example.com`, `Ada`
 *   and `Lovelace` in `ada.lovelace@example.com`); or
 * - it follows such a word in a run of capitalised words joined by single
 *   spaces (a full name: `Lovelace` in `Ada Lovelace`), at most 4 words from
 *   it; a capitalised word before it (`Dear`, a status) is not tied.
 *
 * Everything else stays structural: a new place, status or plan goes to the
 * model. A name not tied to an email is not served by a learned template;
 * declaring it (`muscle-mem-bindings`) is the way to serve it.
 */

const EMAIL = /[\p{L}\p{N}_][\p{L}\p{N}_.+-]*@[\p{L}\p{N}_-]+(?:\.[\p{L}\p{N}_-]+)+/gu;
/** Capitalised words joined by single spaces, not glued to other word characters. */
const CAPITALISED_RUN = /(?<![\p{L}\p{N}_])\p{Lu}\p{Ll}+(?:-\p{Lu}\p{Ll}+)*(?: \p{Lu}\p{Ll}+(?:-\p{Lu}\p{Ll}+)*)*(?![\p{L}\p{N}_])/gu;
/** A token as leaves.ts splits text: word characters, joined by `- . @ / + : #`. */
const TOKEN = /[\p{L}\p{N}_]+(?:[-.@/+:#][\p{L}\p{N}_]+)*/gu;
/** The most words of a full name tied from its first tied word. */
const MAX_NAME_WORDS = 4;
/** The shortest run of an email's local part that ties a word. */
const MIN_TIE = 3;

/** Whether a leaf value is a word: letters only (and joiners), no digit, no `@`. Such values are closed-class unless tied. */
export function isWordValue(value: string): boolean {
  return /^\p{L}+(?:[-.'][\p{L}]+)*$/u.test(value);
}

/** The case-folded letter runs of the local parts of the emails in some texts. */
function localRuns(texts: readonly string[]): Set<string> {
  const runs = new Set<string>();
  for (const text of texts) {
    for (const match of text.matchAll(EMAIL)) {
      const local = match[0].slice(0, match[0].indexOf("@")).toLowerCase();
      for (const run of local.match(/\p{L}+/gu) ?? []) if ([...run].length >= MIN_TIE) runs.add(run);
    }
  }
  return runs;
}

/**
 * The words that the messages tie to an identity (see above), exact case.
 *
 * @example tiedWords([{ role: "user", content: "I'm Ada Lovelace, ada42@example.com, order Delivered" }]) // => Set { "Ada", "Lovelace" }
 */
export function tiedWords(messages: readonly CanonicalMessage[]): Set<string> {
  const texts = messages.flatMap(textsOf);
  const runs = localRuns(texts);
  const tied = new Set<string>();
  if (runs.size === 0) return tied;
  for (const text of texts) {
    for (const token of text.match(TOKEN) ?? []) if (isWordValue(token) && runs.has(token.toLowerCase())) tied.add(token);
    for (const match of text.matchAll(CAPITALISED_RUN)) {
      // From the first tied word on, at most MAX_NAME_WORDS: the rest of a full name follows its first name
      // (`Dear Ada Lovelace` ties `Ada` and `Lovelace`, never `Dear`; `Delivered Ada Lovelace` never `Delivered`).
      const words = match[0].split(" ");
      const first = words.findIndex((w) => runs.has(w.toLowerCase()));
      if (words.length > 1 && first !== -1) for (const w of words.slice(first, first + MAX_NAME_WORDS)) tied.add(w);
    }
  }
  return tied;
}
