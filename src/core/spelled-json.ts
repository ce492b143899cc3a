/**
 * JSON written with some of its numbers in the text the model (or the client) wrote them with: a hit that
 * serves a recorded field writes `1.0` as `1.0`, not as JavaScript's `1`, which a client that keeps the
 * int/float difference (Python's `json`) reads as another value (docs/reliability.md, "The answer side").
 * The texts are the spellings src/core/number-text.ts reads (`[pointer, text]`).
 */

import { inexactNumber } from "./exact-json";
import type { Spelling } from "./number-text";

/** A JSON number's text (RFC 8259), nothing else. */
const NUMBER_TEXT = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/** Whether `text` is a JSON number that parses to exactly `value`: only then may it be written in its place. */
export function writesNumber(text: string, value: unknown): boolean {
  return typeof value === "number" && NUMBER_TEXT.test(text) && Number(text) === value && inexactNumber(text) === null;
}

/** An RFC 6901 reference token read back (`~1` as `/`, `~0` as `~`). */
const unescapeToken = (token: string) => token.replaceAll("~1", "/").replaceAll("~0", "~");

/** The first reference token of a pointer (`/usage/cost` -> `usage`); "" for the root. */
export function fieldOf(pointer: string): string {
  const end = pointer.indexOf("/", 1);
  return unescapeToken(end < 0 ? pointer.slice(1) : pointer.slice(1, end));
}

/** The spellings of `spelled` under the pointer `prefix` (`/response`), their pointers from there. */
export function spellingsUnder(spelled: readonly Spelling[], prefix: string): Spelling[] {
  return spelled.filter(([pointer]) => pointer.startsWith(`${prefix}/`)).map(([pointer, text]) => [pointer.slice(prefix.length), text]);
}

/** Whether a stored value is a list of spellings (an import stores anything). */
export function isSpellings(value: unknown): value is Spelling[] {
  return Array.isArray(value) && value.every((s) => Array.isArray(s) && s.length === 2 && typeof s[0] === "string" && typeof s[1] === "string");
}

/** The holder of each spelled number in `value` and its member, for the numbers whose text writes exactly the value there. */
function holders(value: unknown, spellings: readonly Spelling[]): Map<object, Map<string, string>> {
  const at = new Map<object, Map<string, string>>();
  for (const [pointer, text] of spellings) {
    const tokens = pointer.split("/").slice(1).map(unescapeToken);
    const last = tokens.pop();
    let holder: unknown = value;
    for (const token of tokens)
      holder = typeof holder === "object" && holder !== null && Object.hasOwn(holder, token) ? (holder as Record<string, unknown>)[token] : undefined;
    if (last === undefined || typeof holder !== "object" || holder === null || !Object.hasOwn(holder, last)) continue;
    if (!writesNumber(text, (holder as Record<string, unknown>)[last])) continue;
    const members = at.get(holder) ?? new Map<string, string>();
    members.set(last, text);
    at.set(holder, members);
  }
  return at;
}

/**
 * `JSON.stringify(value)`, with the number at each spelling's pointer written as its text. A spelling whose
 * pointer names no number, or whose text is not JSON for exactly that number, is left out (the number is
 * written as JavaScript writes it): a spelling never changes what a value is, only how it is written.
 *
 * @example spelledJson({ t: 1, n: [2.5] }, [["/t", "1.0"], ["/n/0", "2.50"], ["/t", "2"]]) // '{"t":1.0,"n":[2.50]}'
 */
export function spelledJson(value: unknown, spellings: readonly Spelling[]): string {
  const at = spellings.length === 0 ? null : holders(value, spellings);
  if (!at || at.size === 0) return JSON.stringify(value);
  // A fresh marker cannot occur in the rest of the value: each spelled number is written as a marked string, then spliced.
  const marker = `\u0000mm-number-${crypto.randomUUID()}-`;
  const texts: string[] = [];
  const json = JSON.stringify(value, function (this: unknown, key: string, member: unknown) {
    const text = typeof this === "object" && this !== null ? at.get(this)?.get(key) : undefined;
    if (text === undefined || typeof member !== "number") return member;
    texts.push(text);
    return `${marker}${texts.length - 1}`;
  });
  let out = json;
  texts.forEach((text, i) => {
    out = out.replace(JSON.stringify(`${marker}${i}`), () => text);
  });
  return out;
}
