import { canonicalJson } from "../canonical";
import type { CanonicalMessage } from "../messages";
import type { Bindings } from "./bindings";
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

/** Replaces every whole occurrence of a bound value in `text` by `{{name}}`. */
export function substituteText(text: string, bindings: Bindings): string {
  const claims: Array<[number, number, string]> = [];
  for (const [name, value] of ordered(bindings)) {
    for (let i = text.indexOf(value); i !== -1; i = text.indexOf(value, i + 1)) {
      const j = i + value.length;
      if (!isWholeAt(text, i, j) || claims.some(([a, b]) => i < b && j > a)) continue;
      claims.push([i, j, name]);
    }
  }
  if (claims.length === 0) return text;
  claims.sort((x, y) => x[0] - y[0]);
  let out = "";
  let last = 0;
  for (const [i, j, name] of claims) {
    out += `${text.slice(last, i)}{{${name}}}`;
    last = j;
  }
  return out + text.slice(last);
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

/**
 * Applies `onText` to each text of a message (content parts, refusal, arguments
 * that are not JSON) and `onString`/`onNumber` to the leaves of JSON arguments.
 */
function mapMessage(message: CanonicalMessage, onText: (s: string) => string, onNumber: (n: number) => unknown, onString: (s: string) => unknown = onText): CanonicalMessage {
  const out: CanonicalMessage = { ...message };
  if (typeof message.content === "string") out.content = onText(message.content);
  else if (Array.isArray(message.content)) out.content = message.content.map(onText);
  if (message.refusal !== undefined) out.refusal = onText(message.refusal);
  if (message.tool_calls) {
    out.tool_calls = message.tool_calls.map((call) => {
      let args: unknown;
      try {
        args = JSON.parse(call.function.arguments);
      } catch {
        return { ...call, function: { ...call.function, arguments: onText(call.function.arguments) } };
      }
      return { ...call, function: { ...call.function, arguments: canonicalJson(mapJson(args, onString, onNumber)) } };
    });
  }
  return out;
}

/**
 * Keys a message with placeholders: whole occurrences of bound values in text
 * and in JSON string leaves become `{{name}}`; a JSON number leaf equal to a
 * bound value becomes the string `"{{#name}}"`.
 */
export function substituteMessage(message: CanonicalMessage, bindings: Bindings): CanonicalMessage {
  const byValue = new Map(Object.entries(bindings).map(([name, value]) => [value, name]));
  return mapMessage(
    message,
    (text) => substituteText(text, bindings),
    (n) => {
      const name = byValue.get(canonicalJson(n));
      return name === undefined ? n : `{{#${name}}}`;
    },
  );
}

/** Every text of a message, JSON strings decoded, for searching. */
export function textsOf(message: CanonicalMessage): string[] {
  const texts: string[] = [];
  mapMessage(
    message,
    (text) => {
      texts.push(text);
      return text;
    },
    (n) => {
      texts.push(canonicalJson(n));
      return n;
    },
  );
  return texts;
}

/** Whether a message already holds something that looks like a placeholder. */
export function hasPlaceholderLike(message: CanonicalMessage): boolean {
  return textsOf(message).some((text) => new RegExp(PLACEHOLDER.source).test(text));
}

/** Thrown while rendering when a placeholder has no value that fits. */
class Unbound extends Error {}

function renderText(text: string, bindings: Bindings): string {
  return text.replace(PLACEHOLDER, (_, hash: string, name: string) => {
    const value = bindings[name];
    if (hash || value === undefined) throw new Unbound(name);
    return value;
  });
}

/**
 * Renders a stored message with the current values: `{{name}}` in text and
 * JSON strings (escaped by serialisation), `"{{#name}}"` as a JSON number.
 * Null when a placeholder is not bound, or a number placeholder's value is not
 * a canonical JSON number: that is a miss.
 */
export function renderMessage(message: CanonicalMessage, bindings: Bindings): CanonicalMessage | null {
  try {
    return mapMessage(
      message,
      (text) => renderText(text, bindings),
      (n) => n,
      (text) => {
        const number = /^\{\{#([A-Za-z_][A-Za-z0-9_]{0,63})\}\}$/.exec(text);
        if (!number) return renderText(text, bindings);
        const value = bindings[number[1]];
        if (value === undefined || !isCanonicalNumber(value)) throw new Unbound(number[1]);
        return Number(value);
      },
    );
  } catch (error) {
    if (error instanceof Unbound) return null;
    throw error;
  }
}
