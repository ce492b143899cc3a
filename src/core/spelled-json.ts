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

type Container = Record<string, unknown> | unknown[];

/** The member `token` of `value` when it is an object or array that has it. */
function memberOf(value: unknown, token: string): { found: boolean; member?: unknown } {
  return typeof value === "object" && value !== null && Object.hasOwn(value, token)
    ? { found: true, member: (value as Record<string, unknown>)[token] }
    : { found: false };
}

/**
 * `value` with the number at each spelling's pointer replaced by `marker` and its index in `texts` (where the
 * text writes exactly that number), the objects on the way copied (once each), never changed; `value` itself
 * when none applies.
 */
function marked(value: unknown, spellings: readonly Spelling[], marker: string, texts: string[]): unknown {
  const copies = new Map<object, Container>();
  const copyOf = (o: object): Container => {
    let copy = copies.get(o);
    if (!copy) copies.set(o, (copy = Array.isArray(o) ? [...(o as unknown[])] : { ...(o as Record<string, unknown>) }));
    return copy;
  };
  for (const [pointer, text] of spellings) {
    const tokens = pointer.split("/").slice(1).map(unescapeToken);
    const last = tokens.pop();
    const chain: unknown[] = [value];
    for (const token of tokens) chain.push(memberOf(chain[chain.length - 1], token).member);
    const holder = chain[chain.length - 1];
    const at = last === undefined ? { found: false } : memberOf(holder, last);
    if (last === undefined || !at.found || Array.isArray(holder) !== /^(?:0|[1-9]\d*)$/.test(last) || !writesNumber(text, at.member)) continue;
    let copy = copyOf(value as object);
    tokens.forEach((token, i) => {
      const child = copyOf(chain[i + 1] as object);
      (copy as Record<string, unknown>)[token] = child;
      copy = child;
    });
    texts.push(text);
    (copy as Record<string, unknown>)[last] = `${marker}${texts.length - 1}`;
  }
  return typeof value === "object" && value !== null ? (copies.get(value) ?? value) : value;
}

/**
 * `JSON.stringify(value)`, with the number at each spelling's pointer written as its text. A spelling whose
 * pointer names no number, or whose text is not JSON for exactly that number, is left out (the number is
 * written as JavaScript writes it): a spelling never changes what a value is, only how it is written.
 * Each object that `written` maps (by identity) is written as its text instead, which the caller read it from
 * (Gemini call `args` as the model sent them: src/providers/gemini/render.ts); the text must be compact JSON.
 *
 * @example spelledJson({ t: 1, n: [2.5] }, [["/t", "1.0"], ["/n/0", "2.50"], ["/t", "2"]]) // '{"t":1.0,"n":[2.50]}'
 */
export function spelledJson(value: unknown, spellings: readonly Spelling[], written?: ReadonlyMap<object, string>): string {
  const writes = written !== undefined && written.size > 0;
  if (spellings.length === 0 && !writes) return JSON.stringify(value);
  // Made once per isolate (not at load: the platform refuses randomness in global scope) and never written out, so
  // it cannot occur in the rest of the value: each spelled number is written as a marked string, then spliced.
  const mark = (marker ??= `\u0000mm-number-${crypto.randomUUID()}-`);
  const texts: string[] = [];
  const shown = spellings.length === 0 ? value : marked(value, spellings, mark, texts);
  const json = writes
    ? JSON.stringify(shown, (_key, v: unknown) => {
        const text = typeof v === "object" && v !== null ? written.get(v) : undefined;
        if (text === undefined) return v;
        texts.push(text);
        return `${mark}${texts.length - 1}`;
      })
    : JSON.stringify(shown);
  if (texts.length === 0) return json;
  const at = texts.map((text, i) => {
    const placeholder = JSON.stringify(`${mark}${i}`);
    const from = json.indexOf(placeholder);
    return { from, to: from + placeholder.length, text };
  });
  at.sort((a, b) => a.from - b.from);
  let out = "";
  let from = 0;
  for (const splice of at) {
    if (splice.from < from) continue;
    out += json.slice(from, splice.from) + splice.text;
    from = splice.to;
  }
  return out + json.slice(from);
}

let marker: string | undefined;
