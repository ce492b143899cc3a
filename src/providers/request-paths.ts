import { fieldPath, type Segment } from "../core/field-path";

/**
 * How an API's request names a miss's differing field (docs/api.md, "Why it missed"): each provider's folder
 * declares its `requestPaths` (ProviderModule), src/engine/explain/request-paths.ts asks the registry by the
 * frame's API. The helpers below are shared by the providers' hooks. Pure.
 */

export type { Segment };
export type Obj = { [key: string]: unknown };

/** Where a canonical message's request items are: the list, its name, and the items this message came from. */
export interface ItemPlace {
  /** The request's list's name: `messages`, `input`, `contents`. */
  readonly container: string;
  readonly items: readonly unknown[];
  /** The request indexes of the canonical message's items (one, or a run the canonical form merged); the first is an object. */
  readonly group: readonly number[];
  /** The canonical message's JSON. */
  readonly canonical: unknown;
}

/** A provider's hook: its request's item list and how a canonical path maps back into it. */
export interface RequestPaths {
  /** The request's list of items: `messages`, `input`, `contents`. */
  readonly container: string;
  /** The request items each canonical message came from (default: one each); null when they cannot be told. */
  groups?(items: readonly unknown[], body: unknown): number[][] | null;
  /** The request's name for its one message when its list is not a list (Responses' `input` string), else null. */
  whole?(list: unknown, pathLength: number): string | null;
  /** The canonical path as written when its item is not known (starred after): default, unchanged. */
  unplaced?(segments: readonly Segment[]): readonly Segment[];
  /** The path of `segments` (inside the canonical message) in the request. */
  name(place: ItemPlace, segments: readonly Segment[]): string;
}

const TEXT_TYPES = new Set(["text", "input_text", "output_text"]);

export const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
export const join = (base: string, segments: readonly Segment[]) => segments.reduce<string>((path, s) => fieldPath(path, s), base);
/** A path whose positions are not known: every index `[*]`. */
export const starred = (base: string, segments: readonly Segment[]) =>
  segments.reduce<string>((p, s) => (typeof s === "number" ? `${p}[*]` : fieldPath(p, s)), base);

/** A string holding JSON, parsed (the comparison reads such strings as JSON); anything else as it is. */
function unwrapped(value: unknown): unknown {
  if (typeof value !== "string" || !/^\s*[[{]/.test(value)) return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

/**
 * `segments` walked in `value` as far as it holds them (the first one it lacks named too, when its container is
 * of the kind the segment names); `renames` maps a canonical key to the request's (`argsJson` → `args`).
 */
export function tail(value: unknown, segments: readonly Segment[], renames: Record<string, string> = {}): Segment[] {
  const out: Segment[] = [];
  let at = value;
  for (const segment of segments) {
    at = unwrapped(at);
    if (typeof segment === "number") {
      if (!Array.isArray(at)) break;
      out.push(segment);
      at = at[segment];
    } else {
      if (!isObj(at)) break;
      const key = !(segment in at) && renames[segment] && renames[segment] in at ? renames[segment] : segment;
      out.push(key);
      at = at[key];
    }
    if (at === undefined) break;
  }
  return out;
}

/** The request index of a canonical list's `n`th element, when `kept` says which the canonical form kept. */
export function nthKept(list: readonly unknown[], n: number, kept: (element: unknown) => boolean): number | null {
  let seen = -1;
  for (let i = 0; i < list.length; i++) if (kept(list[i]) && ++seen === n) return i;
  return null;
}

/** An element the canonical form keeps: anything but an empty text part or block. */
export const notEmptyText = (e: unknown) => !(isObj(e) && typeof e.type === "string" && TEXT_TYPES.has(e.type) && e.text === "");

/**
 * `key[j]…` of a canonical list whose request form is a string (one text part: `key` and the JSON inside it) or a
 * list with empty text parts left out. `inner`: the rest inside the request's element.
 */
export function inList(item: Obj, key: string, segments: readonly Segment[], inner: (element: unknown, rest: readonly Segment[]) => Segment[]): Segment[] {
  const value = item[key];
  const [, j, ...rest] = segments;
  if (typeof value === "string") return j === 0 && rest[0] === "text" ? [key, ...tail(value, rest.slice(1))] : [key];
  if (!Array.isArray(value) || typeof j !== "number") return [key];
  const at = nthKept(value, j, notEmptyText);
  return at === null ? [key] : [key, at, ...inner(value[at], rest)];
}

/** The first item of a place: `container[i]` and the item. */
export const firstOf = (place: ItemPlace): [string, Obj] => [`${place.container}[${place.group[0]}]`, place.items[place.group[0]] as Obj];
