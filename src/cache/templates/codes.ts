import { CURRENCIES } from "./slot-types";

/**
 * Codes, not quantities (the fifth hunt, docs/templates.md): digits that name something from a list rather
 * than count or measure it. Ranged as numbers, `6011` (cash) lay between the merchant categories `5411` and
 * `7011`, a Hawaiian ZIP between two mainland ones, `+53` (Cuba) between `+44` and `+61`, a Maestro BIN
 * between Visa and Mastercard ones: each was served the answer for the others. A leaf of digits is a code when
 *
 * - a JSON string holds it whole (`"mcc":"5411"`, in tool-call arguments or in a tool result's text): an API
 *   writes a code as a string, a quantity as a number;
 * - it follows a `+` (a calling code, `+53`), or is padded with zeros (`0053`, `02139`: a field of a fixed width);
 * - a mask follows it (`501018******5555`: the BIN, whose first digits decide the brand; the last 4 are data);
 * - it follows an upper-case label of 2 to 5 letters that is no currency (`MCC 6011`, `BIN 501018`, `ZIP: 96813`),
 *   or a word that names a code in any case (`category 6011`, `zip 96813`, `area code 808`: CODE_WORDS);
 * - it is three digits whole in parentheses (`(808) 555-0100`: an area code, which routes the number).
 *
 * A code serves only a value its slot confirmed (learned.ts rejectReason), never a range.
 */
const codeLeaves = new WeakSet<object>();
const DIGITS = /^\d+$/;
const LABEL = /^\p{Lu}{2,5}$/u;
const LABEL_GAP = /^ ?[:#]? ?$/;
const MASK = /^[*\u2022]/;
const CURRENCY = new Set(CURRENCIES);
/**
 * Words that name a code, in any case: after them, digits were ranged as a number (`category 6011`, cash, lay between
 * the categories 5411 and 7011). Any lower-case word would make every `order 48213` or `seats 45` closed-class.
 */
const CODE_WORDS = new Set(["mcc", "bin", "iin", "zip", "postcode", "category", "code", "sic", "naics"]);

/** Whether a leaf is a code (above). */
export function isCodeLeaf(leaf: object): boolean {
  return codeLeaves.has(leaf);
}

/** Marks the leaf of a JSON string that holds digits only, whole. */
export function markWholeString(value: string, leaf: object | undefined): void {
  if (leaf && DIGITS.test(value)) codeLeaves.add(leaf);
}

/**
 * Marks the codes among one text's leaves, given its separators (`separators[i]` before `leaves[i]`,
 * `separators[i + 1]` after it).
 */
export function markCodes(separators: readonly string[], leaves: ReadonlyArray<{ value: string }>): void {
  for (let i = 0; i < leaves.length; i++) {
    const value = leaves[i].value;
    if (!DIGITS.test(value)) continue;
    const [before, after] = [separators[i], separators[i + 1]];
    const word = i > 0 ? leaves[i - 1].value : "";
    const named = (LABEL.test(word) && !CURRENCY.has(word)) || CODE_WORDS.has(word.toLowerCase());
    const label = named && before !== "" && LABEL_GAP.test(before);
    const quoted = before.endsWith('"') && after.startsWith('"');
    const bracketed = value.length === 3 && before.endsWith("(") && after.startsWith(")");
    if (quoted || label || bracketed || before.endsWith("+") || value.startsWith("0") || MASK.test(after)) codeLeaves.add(leaves[i]);
  }
}
