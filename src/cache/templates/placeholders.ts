import { scanJson } from "../../core/exact-json";
import { canonicalJson } from "../../core/canonical";
import type { CanonicalMessage } from "../../core/messages";
import type { Bindings } from "./bindings";
import { decodeString, escapeJsonString, jsonLiterals, type JsonLiteral } from "./json-text";
import { isCanonicalNumber } from "./leaves";

/** Anything that looks like a placeholder: `{{name}}` in text, `{{#name}}` for a JSON number. */
const PLACEHOLDER = /\{\{(#?)([A-Za-z_][A-Za-z0-9_]{0,63})\}\}/g;
const WORD = /[\p{L}\p{N}_]/u;
const JOINERS = "-.@/+:#";

/** The code point just before index `i` (as a string), or "" at the start. */
function before(s: string, i: number): string {
  if (i <= 0) return "";
  const low = s.charCodeAt(i - 1);
  return low >= 0xdc00 && low <= 0xdfff && i >= 2 ? s.slice(i - 2, i) : s[i - 1];
}

function after(s: string, j: number): string {
  if (j >= s.length) return "";
  return String.fromCodePoint(s.codePointAt(j) ?? 0);
}

/**
 * Whether `s[i, j)` is a whole token: not glued to a word character, and not
 * glued through a joiner (`A-1` is not whole inside `A-10`, `B-A-1` or
 * `Ada.Lovelace`; `Ada` is whole in `Ada.` or `Ada's`).
 */
export function isWholeAt(s: string, i: number, j: number): boolean {
  const b = before(s, i);
  if (b && (WORD.test(b) || (JOINERS.includes(b) && WORD.test(before(s, i - b.length))))) return false;
  const a = after(s, j);
  if (a && (WORD.test(a) || (JOINERS.includes(a) && WORD.test(after(s, j + a.length))))) return false;
  return true;
}

/** Variables longest value first (then by name), so that a longer value claims its span first. */
function ordered(bindings: Bindings): Array<[string, string]> {
  return Object.entries(bindings).sort(([an, av], [bn, bv]) => bv.length - av.length || (an < bn ? -1 : 1));
}

/** The whole occurrences of bound values in `text`, as `[start, end, name]` in order; a longer value claims its span first. */
export function claimsOf(text: string, bindings: Bindings): Array<[number, number, string]> {
  const claims: Array<[number, number, string]> = [];
  for (const [name, value] of ordered(bindings)) {
    for (let i = text.indexOf(value); i !== -1; i = text.indexOf(value, i + 1)) {
      const j = i + value.length;
      if (!isWholeAt(text, i, j) || claims.some(([a, b]) => i < b && j > a)) continue;
      claims.push([i, j, name]);
    }
  }
  return claims.sort((x, y) => x[0] - y[0]);
}

/** Replaces the spans `[start, end)` of `text` (in order, not overlapping) by their replacements. */
function spliced(text: string, edits: ReadonlyArray<readonly [number, number, string]>): string {
  let out = "";
  let last = 0;
  for (const [i, j, replacement] of edits) {
    out += text.slice(last, i) + replacement;
    last = j;
  }
  return out + text.slice(last);
}

/** Replaces every whole occurrence of a bound value in `text` by `{{name}}`. */
export function substituteText(text: string, bindings: Bindings): string {
  const claims = claimsOf(text, bindings);
  return claims.length === 0
    ? text
    : spliced(
        text,
        claims.map(([i, j, name]) => [i, j, `{{${name}}}`] as const),
      );
}

function mapJson(value: unknown, onString: (s: string) => unknown, onNumber: (n: number) => unknown): unknown {
  if (typeof value === "string") return onString(value);
  if (typeof value === "number") return onNumber(value);
  if (Array.isArray(value)) return value.map((v) => mapJson(v, onString, onNumber));
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = mapJson(v, onString, onNumber);
    return out;
  }
  return value;
}

/** Applies `onText` to each text of a message (content parts, refusal) and `onArguments` to each tool call's arguments. */
function mapMessage(message: CanonicalMessage, onText: (s: string) => string, onArguments: (raw: string) => string): CanonicalMessage {
  const out: CanonicalMessage = { ...message };
  if (typeof message.content === "string") out.content = onText(message.content);
  else if (Array.isArray(message.content)) out.content = message.content.map(onText);
  if (typeof message.refusal === "string") out.refusal = onText(message.refusal);
  if (message.tool_calls) {
    out.tool_calls = message.tool_calls.map((call) => ({ ...call, function: { ...call.function, arguments: onArguments(call.function.arguments) } }));
  }
  return out;
}

/** A number token that may not be written as JSON.stringify writes its value (a fraction ending in 0, an exponent, …); a match in a string costs only the exact check. */
const SPELLED_CANDIDATE = /\d\.\d*0(?!\d)|\d[eE]|0\.0{6}|\d{22}/;

/** Whether JSON text holds a number written otherwise than JSON.stringify would write its value (`1.0`, `1e3`). */
function hasSpelledNumber(raw: string): boolean {
  if (!SPELLED_CANDIDATE.test(raw)) return false;
  return (jsonLiterals(raw) ?? []).some((l) => l.kind === "number" && !isCanonicalNumber(raw.slice(l.start, l.end)));
}

/**
 * Applies `onText` to arguments that are not JSON, `onString`/`onNumber` to the leaves of JSON ones (re-serialised canonically).
 * With `spelled`, arguments holding a number written otherwise (`{"qty":1.0}`) are text too: parsed, `1.0` would key as `1`.
 */
function mapArguments(raw: string, onText: (s: string) => string, onString: (s: string) => unknown, onNumber: (n: number) => unknown, spelled = false): string {
  // Arguments that JSON.parse would change (an integer past 2^53, a repeated key) are keyed as their text.
  if (scanJson(raw).lossy !== null || (spelled && hasSpelledNumber(raw))) return onText(raw);
  let args: unknown;
  try {
    args = JSON.parse(raw);
  } catch {
    return onText(raw);
  }
  return canonicalJson(mapJson(args, onString, onNumber));
}

function valueNames(bindings: Bindings): Map<string, string> {
  return new Map(Object.entries(bindings).map(([name, value]) => [value, name]));
}

/**
 * Keys a message with placeholders: whole occurrences of bound values in text
 * and in JSON string leaves become `{{name}}`; a JSON number leaf equal to a
 * bound value becomes the string `"{{#name}}"`. JSON arguments come out canonical.
 * With `spelled` (a request's messages, declared.ts), arguments holding a number written otherwise than
 * JSON.stringify would (`{"qty":1.0}`, a bound `1999.0`) are keyed as their text, as the concrete key keeps
 * it: parsed, they keyed as `1` and `{{#n}}` and were served the answer recorded for `1` and `1999`.
 */
export function substituteMessage(message: CanonicalMessage, bindings: Bindings, spelled = false): CanonicalMessage {
  const byValue = valueNames(bindings);
  const text = (s: string) => substituteText(s, bindings);
  const number = (n: number) => {
    const name = byValue.get(canonicalJson(n));
    return name === undefined ? n : `{{#${name}}}`;
  };
  return mapMessage(message, text, (raw) => mapArguments(raw, text, text, number, spelled));
}

/**
 * The same substitution as `substituteMessage` on one tool call's arguments,
 * made in the text as it was written (key order, spacing and escapes kept).
 * Null when a bound value is not written the way rendering writes it back
 * (`\u0041da` for `Ada`, `1999.0` for `1999`): the text could not come back
 * byte for byte.
 */
export function substituteArguments(raw: string, bindings: Bindings): string | null {
  const literals = jsonLiterals(raw);
  if (!literals) return substituteText(raw, bindings);
  const byValue = valueNames(bindings);
  const edits: Array<[number, number, string]> = [];
  for (const literal of literals) {
    if (literal.kind === "number") {
      const text = raw.slice(literal.start, literal.end);
      const name = byValue.get(canonicalJson(Number(text)));
      if (name === undefined) continue;
      if (text !== bindings[name]) return null;
      edits.push([literal.start, literal.end, `"{{#${name}}}"`]);
      continue;
    }
    const { value, offsets } = decodeString(raw, literal.start, literal.end);
    for (const [i, j, name] of claimsOf(value, bindings)) {
      if (raw.slice(offsets[i], offsets[j]) !== escapeJsonString(bindings[name])) return null;
      edits.push([offsets[i], offsets[j], `{{${name}}}`]);
    }
  }
  return spliced(raw, edits);
}

/** Every text of a message, JSON strings decoded, for searching. */
export function textsOf(message: CanonicalMessage): string[] {
  const texts: string[] = [];
  const push = (text: string) => {
    texts.push(text);
    return text;
  };
  const number = (n: number) => {
    texts.push(canonicalJson(n));
    return n;
  };
  mapMessage(message, push, (raw) => mapArguments(raw, push, push, number));
  return texts;
}

/** Whether a message already holds something that looks like a placeholder. */
export function hasPlaceholderLike(message: CanonicalMessage): boolean {
  return textsOf(message).some((text) => new RegExp(PLACEHOLDER.source).test(text));
}

/** Thrown while rendering when a placeholder has no value that fits. */
class Unbound extends Error {}

const NUMBER_PLACEHOLDER = /^\{\{#([A-Za-z_][A-Za-z0-9_]{0,63})\}\}$/;

function renderText(text: string, bindings: Bindings, encode: (value: string) => string = (value) => value): string {
  return text.replace(PLACEHOLDER, (_, hash: string, name: string) => {
    const value = bindings[name];
    if (hash || value === undefined) throw new Unbound(name);
    return encode(value);
  });
}

function placeholderCount(text: string): number {
  return text.match(PLACEHOLDER)?.length ?? 0;
}

/**
 * Renders JSON arguments in place: `{{name}}` inside a string value becomes
 * the value JSON-escaped, a string value `"{{#name}}"` becomes the number.
 * Keys, spacing and every other byte stay as stored. A placeholder that is
 * only one once decoded (written with escapes) is a miss.
 */
function renderJsonText(raw: string, literals: readonly JsonLiteral[], bindings: Bindings): string {
  const edits: Array<[number, number, string]> = [];
  for (const literal of literals) {
    if (literal.kind !== "string") continue;
    const inner = raw.slice(literal.start + 1, literal.end - 1);
    const count = placeholderCount(inner);
    const decoded = inner.includes("\\") ? decodeString(raw, literal.start, literal.end).value : inner;
    if (placeholderCount(decoded) !== count) throw new Unbound("escaped placeholder");
    if (count === 0) continue;
    const number = NUMBER_PLACEHOLDER.exec(inner);
    if (!number) {
      edits.push([literal.start, literal.end, `"${renderText(inner, bindings, escapeJsonString)}"`]);
      continue;
    }
    const value = bindings[number[1]];
    if (value === undefined || !isCanonicalNumber(value)) throw new Unbound(number[1]);
    edits.push([literal.start, literal.end, value]);
  }
  return spliced(raw, edits);
}

function renderArgumentsOrThrow(raw: string, bindings: Bindings): string {
  const literals = jsonLiterals(raw);
  return literals ? renderJsonText(raw, literals, bindings) : renderText(raw, bindings);
}

/** One tool call's stored arguments rendered with the current values (see renderMessage); null for a miss. */
export function renderArguments(raw: string, bindings: Bindings): string | null {
  try {
    return renderArgumentsOrThrow(raw, bindings);
  } catch (error) {
    if (error instanceof Unbound) return null;
    throw error;
  }
}

/**
 * Renders a stored message with the current values: `{{name}}` in text and in
 * JSON string values (JSON-escaped), `"{{#name}}"` as a JSON number. Tool-call
 * arguments are rendered in place, so they keep the stored key order and
 * spacing. Null when a placeholder is not bound, or a number placeholder's
 * value is not a canonical JSON number: that is a miss.
 */
export function renderMessage(message: CanonicalMessage, bindings: Bindings): CanonicalMessage | null {
  try {
    return mapMessage(
      message,
      (text) => renderText(text, bindings),
      (raw) => renderArgumentsOrThrow(raw, bindings),
    );
  } catch (error) {
    if (error instanceof Unbound) return null;
    throw error;
  }
}
