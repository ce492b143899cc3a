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
 * - it is the one word right after such a word in a run of capitalised words
 *   joined by single spaces (a last name: `Lovelace` in `Ada Lovelace`), when
 *   no other word of the run is tied by an email; a word after that (`Gold`
 *   in `Ada Lovelace Gold`, a plan) or before it (`Dear`, a status) is not tied.
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
/** The most words of a run read from its first tied word when more than one is an email's. */
const MAX_NAME_WORDS = 4;
/** The shortest run of an email's local part that ties a word. */
const MIN_TIE = 3;

/** Whether a leaf value is a word: letters only (and joiners), no digit, no `@`. Such values are closed-class unless tied. */
export function isWordValue(value: string): boolean {
  return /^\p{L}+(?:[-.'][\p{L}]+)*$/u.test(value);
}

/** What one message holds for tiedWords: its emails' letter runs, its word tokens, its runs of capitalised words. */
interface MessageTies {
  /** The case-folded letter runs (at least MIN_TIE letters) of the local parts of its emails. */
  runs: string[];
  /** Its distinct tokens that are words (isWordValue), each with its case-folded form. */
  words: Array<[word: string, folded: string]>;
  /** Its runs of capitalised words of more than one word, each word with its case-folded form. */
  names: Array<Array<[word: string, folded: string]>>;
}

/**
 * Each message's MessageTies, once per message object: learning asks for the ties of the same messages
 * again and again (a trajectory's, each partner's, each earlier turn's: shared message objects), and the
 * regexes over a long system prompt cost more than the rest of a pairing. A message is never changed
 * once parsed, so the memo never changes the result.
 */
const perMessage = new WeakMap<CanonicalMessage, MessageTies>();

function tiesOf(message: CanonicalMessage): MessageTies {
  const known = perMessage.get(message);
  if (known) return known;
  const runs = new Set<string>();
  const words = new Map<string, string>();
  const names: MessageTies["names"] = [];
  for (const text of textsOf(message)) {
    for (const match of text.matchAll(EMAIL)) {
      const local = match[0].slice(0, match[0].indexOf("@")).toLowerCase();
      for (const run of local.match(/\p{L}+/gu) ?? []) if ([...run].length >= MIN_TIE) runs.add(run);
    }
    for (const token of text.match(TOKEN) ?? []) if (!words.has(token) && isWordValue(token)) words.set(token, token.toLowerCase());
    for (const match of text.matchAll(CAPITALISED_RUN)) {
      const run = match[0].split(" ");
      if (run.length > 1) names.push(run.map((w) => [w, w.toLowerCase()]));
    }
  }
  const ties = { runs: [...runs], words: [...words], names };
  perMessage.set(message, ties);
  return ties;
}

/**
 * The words that the messages tie to an identity (see above), exact case.
 *
 * @example tiedWords([{ role: "user", content: "I'm Ada Lovelace, ada42@example.com, order Delivered" }]) // => Set { "Ada", "Lovelace" }
 */
export function tiedWords(messages: readonly CanonicalMessage[]): Set<string> {
  const ties = messages.map(tiesOf);
  const runs = new Set(ties.flatMap((t) => t.runs));
  const tied = new Set<string>();
  if (runs.size === 0) return tied;
  for (const { words, names } of ties) {
    for (const [word, folded] of words) if (runs.has(folded)) tied.add(word);
    for (const run of names) {
      // From the first tied word on: a last name follows its first name (`Dear Ada Lovelace` ties `Ada` and
      // `Lovelace`, never `Dear`; `Delivered Ada Lovelace` never `Delivered`).
      // Only the one word after it, when no other word of the run is an email's: `Ada Lovelace Gold` never
      // ties `Gold` (a plan the model may decide on); a longer name's later words stay structural (a miss).
      const first = run.findIndex(([, folded]) => runs.has(folded));
      if (first === -1) continue;
      const email = run.filter(([, folded]) => runs.has(folded)).length;
      for (const [w] of run.slice(first, first + (email > 1 ? MAX_NAME_WORDS : 2))) if (email === 1 || runs.has(w.toLowerCase())) tied.add(w);
    }
  }
  return tied;
}
