/**
 * Where two canonical values differ: the first differing field's path
 * (`tool_calls[0].function.arguments.amount_cents`), how many leaves differ,
 * and a short diff of the differing text. Pure: no store, no clock. JSON held
 * in a string (tool-call arguments, a tool result) is compared as JSON.
 */

import type { ShortDiff } from "../../core/explanation";
import { fieldPath, type Segment } from "../../core/field-path";

export { fieldPath, type Segment };

export type { ShortDiff };

/** A JSON value as canonical messages and frames hold them. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** The first field where `incoming` (the request) and `recorded` (a stored node) differ. */
export interface FieldDifference {
  /** The field's path, `content` or `tool_calls[0].function.arguments.amount_cents`; "" for the values themselves. */
  path: string;
  /** The request's value there (undefined: the request has no such field). */
  incoming: Json | undefined;
  /** The recorded value there (undefined: the recording has no such field). */
  recorded: Json | undefined;
}

const SEGMENT = /^(?:\.?([A-Za-z_$][A-Za-z0-9_$-]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\])/;

/** The steps of a path `fieldPath` wrote: `tool_calls[0]["a b"]` is `["tool_calls", 0, "a b"]`. */
export function segmentsOf(path: string): Segment[] {
  const out: Segment[] = [];
  let rest = path;
  while (rest !== "") {
    const m = SEGMENT.exec(rest);
    if (!m) return [...out, rest];
    out.push(m[1] ?? (m[2] !== undefined ? Number(m[2]) : (JSON.parse(m[3]) as string)));
    rest = rest.slice(m[0].length);
  }
  return out;
}

function isObject(value: Json | undefined): value is { [key: string]: Json } {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A string that holds a JSON object or array, parsed; anything else as it is. */
function unwrapped(value: Json | undefined): Json | undefined {
  if (typeof value !== "string") return value;
  const text = value.trim();
  if (!(text.startsWith("{") || text.startsWith("["))) return value;
  try {
    return JSON.parse(text) as Json;
  } catch {
    return value;
  }
}

/** Whether two values are equal as JSON (key order aside). */
export function sameJson(a: Json | undefined, b: Json | undefined): boolean {
  return firstDifference(a, b) === null;
}

/** An empty value: null, "", [] or {}. */
function isEmpty(value: Json | undefined): boolean {
  if (value === null || value === "") return true;
  if (Array.isArray(value)) return value.length === 0;
  return isObject(value) && Object.keys(value).length === 0;
}

/** A field one side lacks and the other holds empty (`annotations: []` beside no `annotations`): a difference that says little. */
function isSlight(incoming: Json | undefined, recorded: Json | undefined): boolean {
  return (incoming === undefined && isEmpty(recorded)) || (recorded === undefined && isEmpty(incoming));
}

/**
 * The first differing field of two values, walked in order: array items by
 * index, object keys sorted. Strings holding JSON on both sides are compared
 * as the JSON they hold. A field one side lacks and the other holds empty is
 * named only when nothing else differs: an edited `content` is the difference,
 * not the `annotations: []` the client left out of the same message. Null when
 * the values are equal.
 *
 * @example firstDifference({ content: "hi" }, { content: "ho" }) // { path: "content", incoming: "hi", recorded: "ho" }
 */
export function firstDifference(incoming: Json | undefined, recorded: Json | undefined, path = ""): FieldDifference | null {
  return walkDifference(incoming, recorded, path, true) ?? walkDifference(incoming, recorded, path, false);
}

function walkDifference(incoming: Json | undefined, recorded: Json | undefined, path: string, skipSlight: boolean): FieldDifference | null {
  if (incoming === recorded) return null;
  if (skipSlight && isSlight(incoming, recorded)) return null;
  const a = unwrapped(incoming);
  const b = unwrapped(recorded);
  if (a !== incoming || b !== recorded) {
    if (typeof a === "string" || typeof b === "string") return { path, incoming, recorded };
    return walkDifference(a, b, path, skipSlight);
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      const d = walkDifference(a[i], b[i], fieldPath(path, i), skipSlight);
      if (d) return d;
    }
    return null;
  }
  if (isObject(a) && isObject(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    for (const key of keys) {
      const d = walkDifference(a[key], b[key], fieldPath(path, key), skipSlight);
      if (d) return d;
    }
    return null;
  }
  return { path, incoming, recorded };
}

/** How many leaves differ between two values (capped at `cap`): how far a recorded node is from the request's message. */
export function countDifferences(incoming: Json | undefined, recorded: Json | undefined, cap = 1000): number {
  if (incoming === recorded) return 0;
  const a = unwrapped(incoming);
  const b = unwrapped(recorded);
  if (Array.isArray(a) && Array.isArray(b)) {
    let n = 0;
    for (let i = 0; i < Math.max(a.length, b.length) && n < cap; i++) n += countDifferences(a[i], b[i], cap - n);
    return Math.min(n, cap);
  }
  if (isObject(a) && isObject(b)) {
    let n = 0;
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
      if (n >= cap) break;
      n += countDifferences(a[key], b[key], cap - n);
    }
    return Math.min(n, cap);
  }
  return a === b ? 0 : 1;
}

/** A value as diff text: strings as they are, anything else as JSON; a missing field is empty. */
export function asText(value: Json | undefined): string {
  if (value === undefined) return "";
  return typeof value === "string" ? value : JSON.stringify(value);
}

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/**
 * The part of two texts that differs, with up to `context` characters of
 * what they share on each side and each side cut at `max` characters.
 *
 * @example shortDiff("refund order A-1", "refund order A-2") // { before: "refund order A-", incoming: "1", recorded: "2", after: "" }
 */
export function shortDiff(incoming: string, recorded: string, context = 40, max = 160): ShortDiff {
  let start = 0;
  const limit = Math.min(incoming.length, recorded.length);
  while (start < limit && incoming[start] === recorded[start]) start++;
  let end = 0;
  while (end < limit - start && incoming[incoming.length - 1 - end] === recorded[recorded.length - 1 - end]) end++;
  const before = incoming.slice(0, start);
  const after = incoming.slice(incoming.length - end);
  return {
    before: before.length > context ? `…${before.slice(before.length - context)}` : before,
    incoming: cut(incoming.slice(start, incoming.length - end), max),
    recorded: cut(recorded.slice(start, recorded.length - end), max),
    after: after.length > context ? `${after.slice(0, context)}…` : after,
  };
}
