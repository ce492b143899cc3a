/**
 * Numbers written otherwise than JSON.stringify writes their value (`1.0`,
 * `2.50`, `1e3`, `0.0000001`): `JSON.parse` merges them with `1`, `2.5`,
 * `1000` and `1e-7`, but an upstream that keeps the text (or the int/float
 * distinction, as Python's `json` does) may show the model either. The keys
 * add each such number's text, at its place, where the canonical form would
 * lose it (docs/reliability.md, "Numbers").
 */

/** One number written otherwise than JSON.stringify would: its JSON pointer and its text. */
export type Spelling = [pointer: string, text: string];

/** What a body's numbers say beyond their values: outside the conversation list, and per item of it. */
export interface BodySpellings {
  /** Pointers from the body's root (`/tools/0/input_schema/properties/n/maximum`). */
  top: Spelling[];
  /** Per item of the conversation list, pointers from the item (`/content/1/input/qty`). */
  items: Map<number, Spelling[]>;
}

/**
 * A number token in a value position whose text may not be the shortest:
 * a fraction ending in 0, an exponent, a small fraction, or 22 digits or more.
 * A match inside a string only costs the exact scan below.
 */
const CANDIDATE = /[:,[]\s*-?(?:\d+\.\d*0(?!\d)|\d+(?:\.\d+)?[eE]|0\.0{6}|\d{22})/;

/** A character of a number, `true`, `false` or `null`. */
const TOKEN_CHAR = /[-+.0-9eEtruefalsn]/;

/** An object key as one JSON Pointer reference token (RFC 6901: `~` as `~0`, `/` as `~1`). */
export const escapeToken = (key: string) => key.replaceAll("~", "~0").replaceAll("/", "~1");

/**
 * The numbers of a JSON body (text `JSON.parse` accepted, nested at most
 * MAX_JSON_DEPTH deep) written otherwise than JSON.stringify writes their
 * value, split between the items of the top-level array `listKey` and the
 * rest; null when there are none (the common case, found by one regex test).
 * With `items` false the list is skipped, not read (its `items` map stays empty).
 *
 * @example bodySpellings('{"t":1.0,"messages":[{"n":2},{"n":3.50}]}', "messages") // { top: [["/t","1.0"]], items: Map { 1 => [["/n","3.50"]] } }
 */
export function bodySpellings(raw: string, listKey: string, items = true): BodySpellings | null {
  if (!CANDIDATE.test(raw)) return null;
  const out: BodySpellings = { top: [], items: new Map() };
  const reader = new SpellingReader(raw);
  reader.skip();
  if (raw.charCodeAt(reader.i) !== 0x7b) return null;
  reader.members((key) => {
    if (key === listKey && raw.charCodeAt(reader.i) === 0x5b) {
      if (!items) reader.skipValue();
      else
        reader.elements((index) => {
          const found: Spelling[] = [];
          reader.value("", found);
          if (found.length > 0) out.items.set(index, found);
        });
    } else reader.value(`/${escapeToken(key)}`, out.top);
  });
  return out.top.length > 0 || out.items.size > 0 ? out : null;
}

/** A cursor over JSON text that JSON.parse accepted: only its structure needs tracking. */
class SpellingReader {
  i = 0;
  constructor(private readonly text: string) {}

  skip(): void {
    for (;;) {
      const c = this.text.charCodeAt(this.i);
      if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return;
      this.i++;
    }
  }

  /** Reads the value at the cursor, noting each number whose text is not its shortest form under `pointer`. */
  value(pointer: string, found: Spelling[]): void {
    this.skip();
    const c = this.text.charCodeAt(this.i);
    if (c === 0x7b) this.members((key) => this.value(`${pointer}/${escapeToken(key)}`, found));
    else if (c === 0x5b) this.elements((index) => this.value(`${pointer}/${index}`, found));
    else if (c === 0x22) this.skipString();
    else {
      const start = this.i;
      while (this.i < this.text.length && TOKEN_CHAR.test(this.text[this.i])) this.i++;
      const token = this.text.slice(start, this.i);
      if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
        if (String(Number(token)) !== token) found.push([pointer, token]);
      }
    }
  }

  /** The string at the cursor (cursor after its closing quote). */
  string(): string {
    const start = this.i;
    this.skipString();
    const inner = this.text.slice(start + 1, this.i - 1);
    return inner.includes("\\") ? (JSON.parse(this.text.slice(start, this.i)) as string) : inner;
  }

  /** Moves the cursor past the string at it, without reading it (a value's text is never a number). */
  skipString(): void {
    const t = this.text;
    let j = this.i + 1;
    for (;;) {
      j = t.indexOf('"', j);
      let slashes = 0;
      for (let k = j - 1; t.charCodeAt(k) === 0x5c; k--) slashes++;
      if (slashes % 2 === 0) break;
      j++;
    }
    this.i = j + 1;
  }

  /** Moves the cursor past the value at it, nested or not, without reading its numbers. */
  skipValue(): void {
    this.skip();
    for (let depth = 0; ; ) {
      const c = this.text.charCodeAt(this.i);
      if (c === 0x22) this.skipString();
      else {
        if (depth === 0 && c !== 0x7b && c !== 0x5b) {
          while (this.i < this.text.length && TOKEN_CHAR.test(this.text[this.i])) this.i++;
          return;
        }
        this.i++;
        if (c === 0x7b || c === 0x5b) depth++;
        else if (c === 0x7d || c === 0x5d) depth--;
      }
      if (depth === 0) return;
    }
  }

  /** Walks the object at the cursor: `each(key)` with the cursor on the member's value, which it must read. */
  members(each: (key: string) => void): void {
    this.i++;
    this.skip();
    if (this.text.charCodeAt(this.i) === 0x7d) {
      this.i++;
      return;
    }
    for (;;) {
      this.skip();
      const key = this.string();
      this.skip();
      this.i++; // ':'
      this.skip();
      each(key);
      this.skip();
      if (this.text.charCodeAt(this.i++) === 0x7d) return; // else ','
    }
  }

  /** Walks the array at the cursor: `each(index)` with the cursor on the element, which it must read. */
  elements(each: (index: number) => void): void {
    this.i++;
    this.skip();
    if (this.text.charCodeAt(this.i) === 0x5d) {
      this.i++;
      return;
    }
    for (let index = 0; ; index++) {
      this.skip();
      each(index);
      this.skip();
      if (this.text.charCodeAt(this.i++) === 0x5d) return; // else ','
    }
  }
}

/** The frame key of the numbers written otherwise than JSON.stringify would, outside the conversation. */
export const NUMBERS_KEY = "muscle-mem:numbers";

/**
 * Adds to `frame` the spellings of the numbers in its own fields, read from
 * the live request's body text `raw` (none for an imported line), whose
 * conversation list `listKey` is keyed per item elsewhere.
 */
export function addBodySpellings(frame: Record<string, unknown>, raw: string | undefined, listKey: string): void {
  const spelled = raw === undefined ? null : bodySpellings(raw, listKey, false);
  if (spelled) addFrameSpellings(frame, spelled.top);
}

/**
 * Adds to `frame` the spellings of the numbers in its own fields (a number in
 * a field the frame leaves out, such as `metadata`, stays out).
 */
export function addFrameSpellings(frame: Record<string, unknown>, top: readonly Spelling[]): void {
  const kept = top.filter(([pointer]) => {
    const end = pointer.indexOf("/", 1);
    const field = (end < 0 ? pointer.slice(1) : pointer.slice(1, end)).replaceAll("~1", "/").replaceAll("~0", "~");
    return Object.hasOwn(frame, field);
  });
  if (kept.length > 0) frame[NUMBERS_KEY] = kept;
}
