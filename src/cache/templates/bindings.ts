import { BINDINGS_HEADER } from "../../core/protocol";
import { hasLoneSurrogate } from "../../core/unicode";

/** Declared variables: `{"name":"Ada","order_id":"A-1"}` from the `muscle-mem-bindings` header. */
export type Bindings = Readonly<Record<string, string>>;

const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
export const MAX_BINDINGS = 32;
export const MAX_VALUE_CHARS = 1024;
export const MAX_HEADER_CHARS = 16 * 1024;

export type BindingsResult = { ok: true; bindings: Bindings | null } | { ok: false; message: string };

/**
 * Validates the header: a JSON object of at most 32 non-empty string values
 * (at most 1,024 characters each) whose names match
 * `^[A-Za-z_][A-Za-z0-9_]{0,63}$`. An absent or empty header means no bindings.
 *
 * @example parseBindings('{"name":"Ada"}') // => { ok: true, bindings: { name: "Ada" } }
 */
export function parseBindings(header: string | null): BindingsResult {
  if (header === null || header.trim() === "") return { ok: true, bindings: null };
  if (header.length > MAX_HEADER_CHARS) return { ok: false, message: `${BINDINGS_HEADER} must be at most ${MAX_HEADER_CHARS} characters.` };
  // HTTP header values are bytes: raw UTF-8 arrives garbled (as Latin-1), so ask for JSON escapes instead.
  if (/[^\x20-\x7e]/.test(header)) {
    return { ok: false, message: `${BINDINGS_HEADER} must be printable ASCII: write other characters as JSON escapes, e.g. {"name":"Zo\\u00eb"}.` };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(header);
  } catch {
    return { ok: false, message: `${BINDINGS_HEADER} is not valid JSON.` };
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return { ok: false, message: `${BINDINGS_HEADER} must be a JSON object of string values.` };
  }
  const entries = Object.entries(parsed as Record<string, unknown>);
  if (entries.length > MAX_BINDINGS) return { ok: false, message: `${BINDINGS_HEADER} may hold at most ${MAX_BINDINGS} variables.` };
  const out: Record<string, string> = {};
  for (const [name, value] of entries) {
    if (!NAME.test(name))
      return { ok: false, message: `${BINDINGS_HEADER}: '${name.slice(0, 70)}' is not a valid variable name (^[A-Za-z_][A-Za-z0-9_]{0,63}$).` };
    if (typeof value !== "string" || value === "") return { ok: false, message: `${BINDINGS_HEADER}: '${name}' must be a non-empty string.` };
    if (hasLoneSurrogate(value)) return { ok: false, message: `${BINDINGS_HEADER}: '${name}' holds half of a UTF-16 surrogate pair, not text.` };
    if (value.length > MAX_VALUE_CHARS) return { ok: false, message: `${BINDINGS_HEADER}: '${name}' must be at most ${MAX_VALUE_CHARS} characters.` };
    out[name] = value;
  }
  return { ok: true, bindings: entries.length === 0 ? null : out };
}

/**
 * Bindings whose values can be told apart: no value equals or contains
 * another. Otherwise an occurrence could belong to two variables, so the
 * request is keyed concretely instead.
 */
export function distinctValues(bindings: Bindings): boolean {
  const values = Object.values(bindings);
  for (let i = 0; i < values.length; i++) {
    for (let j = 0; j < values.length; j++) if (i !== j && values[i].includes(values[j])) return false;
  }
  return true;
}

/** The shortest value a variable may have: shorter ones (`1`, `42`, `Jo`) occur as ordinary text too often to be told apart. */
export const MIN_VALUE_CHARS = 3;
/** A number needs at least this many digits: `100` or `999` stand alone in text as counts and amounts. */
export const MIN_NUMBER_DIGITS = 4;

/**
 * Words so common in answers that a variable holding one (case aside) cannot
 * be told apart from ordinary text: articles, pronouns, auxiliaries,
 * yes/no/true/false/null, small number words and a few words that are also
 * names (`May`, `Will`, `Mark`).
 */
const COMMON = new Set(
  (
    "the and for are but not you all any can had her was one our out day get has him his how man new now old see two way who boy did its let put say she too use " +
    "yes no true false null none nil undefined n/a na ok okay done nope " +
    "this that with have from they will would there their what about which when make like time just know take into year your good some could them than then " +
    "look only come over also back after work first well even want because these give most very may might must shall should mark bill grace hope joy rose " +
    "three four five six seven eight nine ten zero hundred thousand other such here where why each more many much"
  ).split(/\s+/),
);

/**
 * Why a bound value is too short or too common to be unambiguous, or null
 * when it may be declared. A request with such a value is keyed concretely.
 *
 * @example ambiguityOf("1") // => "shorter than 3 characters"
 */
export function ambiguityOf(value: string): string | null {
  if ([...value].length < MIN_VALUE_CHARS) return `shorter than ${MIN_VALUE_CHARS} characters`;
  if (/^[\d.,]+$/.test(value) && value.replace(/\D/g, "").length < MIN_NUMBER_DIGITS) return `a number of fewer than ${MIN_NUMBER_DIGITS} digits`;
  if (COMMON.has(value.toLowerCase())) return "a common word";
  return null;
}
