/**
 * The scripts of a value's letters (Unicode's Script property): a slot serves only values whose letters are
 * of scripts some confirmed value had together. A look-alike (`а`, Cyrillic, in `аda@example.com`; `Е` in
 * `Е-4004`) keeps a value's shape, its length and its domain, and a model told to hold mixed alphabets (or
 * a phishing check, or a reply in the customer's language) decides on it: those were served the answer
 * confirmed for Latin values (test/unit/template-hunt6.test.ts).
 */

/** The scripts told apart; a letter of none of them is `Other`. */
const SCRIPTS = [
  "Latin",
  "Greek",
  "Cyrillic",
  "Armenian",
  "Georgian",
  "Hebrew",
  "Arabic",
  "Devanagari",
  "Bengali",
  "Thai",
  "Hangul",
  "Hiragana",
  "Katakana",
  "Han",
  "Ethiopic",
  "Cherokee",
].map((name) => ({ name, test: new RegExp(`\\p{Script=${name}}`, "u") }));

const LETTER = /\p{L}/gu;

/**
 * The scripts of a value's letters, sorted and joined with `+` (`Cyrillic+Latin`), or "" when it has none.
 *
 * @example scriptsOf("\u0430da@example.com") // => "Cyrillic+Latin"
 */
export function scriptsOf(value: string): string {
  const found = new Set<string>();
  for (const letter of value.match(LETTER) ?? []) found.add(SCRIPTS.find((s) => s.test.test(letter))?.name ?? "Other");
  return [...found].sort().join("+");
}

/** Why a value whose letters' scripts no confirmed value of its slot had together may not be served, or null. */
export function scriptReason(confirmed: readonly string[], value: string): string | null {
  const own = scriptsOf(value);
  if (confirmed.some((v) => scriptsOf(v) === own)) return null;
  return `script ${own || "(no letters)"} never confirmed (a letter of another script may be a look-alike)`;
}
