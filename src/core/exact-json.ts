/**
 * JSON read for what it says, not for what `JSON.parse` keeps of it. Both
 * functions take text that `JSON.parse` already accepted and walk it once,
 * iteratively (no recursion, so any depth is safe to scan).
 */

import { bodySpellings } from "./number-text";

/** The deepest nesting of arrays and objects a request body (or an import line) may have: deeper is a 400. */
export const MAX_JSON_DEPTH = 512;

/** What a scan found: how deep the text nests, and why its parsed value is not exactly the text (null when it is). */
export interface JsonScan {
  depth: number;
  lossy: string | null;
}

const WHITESPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);

/** The index of the closing quote of the string that opens at `start`. */
function stringEnd(text: string, start: number): number {
  let j = start + 1;
  for (;;) {
    j = text.indexOf('"', j);
    if (j < 0) return text.length;
    let slashes = 0;
    for (let k = j - 1; text.charCodeAt(k) === 0x5c; k--) slashes++;
    if (slashes % 2 === 0) return j;
    j++;
  }
}

function isNumberChar(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2b || c === 0x2e || c === 0x65 || c === 0x45;
}

/** Significant digits and decimal exponent of a finite number's text, e.g. `12.50e1` -> ["125", 2]. */
function decimalOf(text: string): { digits: string; exponent: number } {
  const m = /^-?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!m) return { digits: text, exponent: 0 };
  const all = m[1] + (m[2] ?? "");
  const lead = all.length - all.replace(/^0+/, "").length;
  const digits = all.slice(lead).replace(/0+$/, "");
  return { digits, exponent: Number(m[3] ?? 0) + m[1].length - lead - 1 };
}

/**
 * Why `JSON.parse` cannot keep the number `text` exactly (null when it can):
 * beyond a double's range (`1e400`; `1e-400`, which parses to 0), more digits
 * than a double holds (an integer past 2^53), or a negative zero (which
 * serialises as `0`).
 */
export function inexactNumber(text: string): string | null {
  // Fast path: up to 15 digits and no fraction or exponent is always exact.
  if (text.length <= 15 && !/[.eE]/.test(text)) return text === "-0" ? "negative zero" : null;
  const value = Number(text);
  if (!Number.isFinite(value)) return "non-finite number";
  if (value === 0) {
    if (/[1-9]/.test(text.replace(/[eE].*$/, ""))) return "inexact number";
    return text.startsWith("-") ? "negative zero" : null;
  }
  const a = decimalOf(text);
  const b = decimalOf(String(Math.abs(value)));
  return a.digits === b.digits && a.exponent === b.exponent ? null : "inexact number";
}

/** What a scan checks: object keys always; numbers unless `numbers` is false. */
export interface ScanOptions {
  /**
   * Whether a number a double cannot hold makes the text lossy (default true). A reader whose producer
   * writes only doubles (Gemini's `args` is a protobuf Struct) turns it off: its numbers parse to what was meant.
   */
  numbers?: boolean;
}

/**
 * Scans JSON text once: its nesting depth, and the first reason its parsed
 * value would not be exactly the text: a duplicate key in an object (parsers
 * disagree on which one wins), a `__proto__` key (validation drops it), a
 * quote in a key (workerd misreads some), or a number a double cannot hold.
 */
export function scanJson(text: string, options: ScanOptions = {}): JsonScan {
  const numbers = options.numbers ?? true;
  const keys: Array<Set<string> | null> = [];
  let depth = 0;
  let lossy: string | null = null;
  const n = text.length;
  for (let i = 0; i < n; ) {
    const c = text.charCodeAt(i);
    if (c === 0x7b || c === 0x5b) {
      keys.push(c === 0x7b ? new Set() : null);
      if (keys.length > depth) depth = keys.length;
      i++;
    } else if (c === 0x7d || c === 0x5d) {
      keys.pop();
      i++;
    } else if (c === 0x22) {
      const end = stringEnd(text, i);
      const set = keys[keys.length - 1];
      if (set && lossy === null) {
        let k = end + 1;
        while (WHITESPACE.has(text.charCodeAt(k))) k++;
        if (text.charCodeAt(k) === 0x3a) {
          const raw = text.slice(i + 1, end);
          const key = raw.includes("\\") ? (JSON.parse(text.slice(i, end + 1)) as string) : raw;
          // workerd's JSON.parse misreads a key written with an escaped quote when an earlier object had a key
          // equal to the text before that quote: after {"a":1,"\\":2}, {"a":1,"\"":2} parses with the key
          // backslash, not quote (test/worker/json-parse-keys.test.ts). Two bodies would key alike: never cached.
          if (raw.includes('"')) lossy = "quote in a JSON key";
          else if (key === "__proto__") lossy = "__proto__ key";
          else if (set.has(key)) lossy = "duplicate JSON key";
          set.add(key);
        }
      }
      i = end + 1;
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      let j = i + 1;
      while (j < n && isNumberChar(text.charCodeAt(j))) j++;
      if (lossy === null && numbers) lossy = inexactNumber(text.slice(i, j));
      i = j;
    } else {
      i++;
    }
  }
  return { depth, lossy };
}

/** The index just past the value that starts at `start` (after any whitespace) in text JSON.parse accepted. */
function valueEnd(text: string, start: number): number {
  let i = start;
  for (let depth = 0; i < text.length; ) {
    const c = text.charCodeAt(i);
    if (c === 0x22) i = stringEnd(text, i) + 1;
    else if (c === 0x7b || c === 0x5b) {
      depth++;
      i++;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
      i++;
    } else if (WHITESPACE.has(c) || c === 0x2c || c === 0x3a) {
      if (depth === 0 && i > start) return i;
      i++;
      continue;
    } else i++;
    if (depth === 0) {
      // A scalar other than a string runs until a delimiter.
      if (c !== 0x22 && c !== 0x7d && c !== 0x5d) while (i < text.length && !/[\s,}\]]/.test(text[i])) i++;
      return i;
    }
  }
  return i;
}

/**
 * The text of member `member` of each element of the top-level member `list`, as written (numbers in their
 * spelling, keys in their order), in JSON text JSON.parse accepted and scanJson found exact (no repeated key);
 * undefined for an element without it, and an empty list when there is no such list.
 *
 * @example memberTexts('{"content":[{"input":{"b":1.0}},{"type":"text"}]}', "content", "input") // ['{"b":1.0}', undefined]
 */
export function memberTexts(text: string, list: string, member: string): Array<string | undefined> {
  const out: Array<string | undefined> = [];
  const skip = (i: number) => {
    while (WHITESPACE.has(text.charCodeAt(i))) i++;
    return i;
  };
  /** Walks the object at `i` (its `{`): `each(key, valueStart)` returns where the value ends; the index past `}`. */
  const members = (i: number, each: (key: string, at: number) => number): number => {
    i = skip(i + 1);
    while (text.charCodeAt(i) === 0x22) {
      const end = stringEnd(text, i);
      const key = JSON.parse(text.slice(i, end + 1)) as string;
      i = skip(skip(end + 1) + 1); // past ':'
      i = skip(each(key, i));
      if (text.charCodeAt(i) === 0x2c) i = skip(i + 1);
    }
    return i + 1;
  };
  const start = skip(0);
  if (text.charCodeAt(start) !== 0x7b) return out;
  members(start, (key, at) => {
    if (key !== list || text.charCodeAt(at) !== 0x5b) return valueEnd(text, at);
    let i = skip(at + 1);
    while (text.charCodeAt(i) !== 0x5d && i < text.length) {
      let found: string | undefined;
      if (text.charCodeAt(i) === 0x7b)
        i = members(i, (name, valueAt) => {
          const end = valueEnd(text, valueAt);
          if (name === member) found = text.slice(valueAt, end);
          return end;
        });
      else i = valueEnd(text, i);
      out.push(found);
      i = skip(i);
      if (text.charCodeAt(i) === 0x2c) i = skip(i + 1);
    }
    return i + 1;
  });
  return out;
}

/**
 * Whether a response's JSON text writes a number otherwise than JSON.stringify would (`1.0`, `2.50`, `1e-07`)
 * where `served` says a hit serves it as recorded (given the number's JSON pointer tokens, from the root or,
 * `item` true, from its element of the top-level array `list`). Stored as parsed, a hit would write such a number
 * in JavaScript's spelling, which a client that keeps the int/float difference (Python's `json`) reads as another value.
 *
 * @example respelledIn('{"x":1.0,"choices":[{"index":0}]}', "choices", ([f], item) => !item || f !== "index") // true
 */
export function respelledIn(text: string, list: string, served: (tokens: string[], item: boolean) => boolean): boolean {
  const spelled = bodySpellings(text, list);
  if (!spelled) return false;
  const tokens = (pointer: string) => pointer.split("/").slice(1);
  return spelled.top.some(([p]) => served(tokens(p), false)) || [...spelled.items.values()].some((found) => found.some(([p]) => served(tokens(p), true)));
}

const skipSpace = (text: string, i: number) => {
  while (WHITESPACE.has(text.charCodeAt(i))) i++;
  return i;
};

/**
 * The text of the value at `path` (member names and element indexes) in JSON text JSON.parse accepted, as
 * written (numbers in their spelling, keys in their order, the writer's spacing); undefined when there is none.
 * A repeated member is read as JSON.parse reads it: the last.
 *
 * @example valueTextAt('{"parts":[{"args":{"n":1.0}}]}', ["parts", 0, "args"]) // '{"n":1.0}'
 */
export function valueTextAt(text: string, path: ReadonlyArray<string | number>): string | undefined {
  let at = skipSpace(text, 0);
  for (const token of path) {
    const c = text.charCodeAt(at);
    let found = -1;
    if (c === 0x7b && typeof token === "string") {
      let i = skipSpace(text, at + 1);
      while (text.charCodeAt(i) === 0x22) {
        const end = stringEnd(text, i);
        const raw = text.slice(i + 1, end);
        const key = raw.includes("\\") ? (JSON.parse(text.slice(i, end + 1)) as string) : raw;
        const valueAt = skipSpace(text, skipSpace(text, end + 1) + 1);
        if (key === token) found = valueAt;
        i = skipSpace(text, valueEnd(text, valueAt));
        if (text.charCodeAt(i) === 0x2c) i = skipSpace(text, i + 1);
      }
    } else if (c === 0x5b && typeof token === "number") {
      let i = skipSpace(text, at + 1);
      for (let index = 0; i < text.length && text.charCodeAt(i) !== 0x5d; index++) {
        if (index === token) {
          found = i;
          break;
        }
        i = skipSpace(text, valueEnd(text, i));
        if (text.charCodeAt(i) === 0x2c) i = skipSpace(text, i + 1);
      }
    }
    if (found < 0) return undefined;
    at = found;
  }
  return text.slice(at, valueEnd(text, at));
}

/**
 * JSON text without the whitespace between its tokens (what a server's pretty-printing added), everything
 * else as written: numbers keep their spelling, keys their order, strings their escapes.
 *
 * @example compactJson('{\n  "n": 1.0,\n  "s": "a b"\n}') // '{"n":1.0,"s":"a b"}'
 */
export function compactJson(text: string): string {
  let out = "";
  let from = 0;
  for (let i = 0; i < text.length; ) {
    const c = text.charCodeAt(i);
    if (c === 0x22) i = stringEnd(text, i) + 1;
    else if (WHITESPACE.has(c)) {
      out += text.slice(from, i);
      i = skipSpace(text, i);
      from = i;
    } else i++;
  }
  return out + text.slice(from);
}
