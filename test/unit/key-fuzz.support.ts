import { expect } from "vitest";
import { seeded } from "../../tools/eval-workflows/types";

/**
 * The systematic key fuzzer's engine (key-fuzz.*.test.ts). From a realistic base request it changes one
 * field path at a time (another value, removed, added, another JSON type, an array reordered) and checks
 * the rule of docs/reliability.md, "What is in the key": the key changes, or the request bypasses the cache
 * or is rejected (never served), unless the path is on an allow-list whose reason is written beside it.
 * Seeded and pure: the adapters' key functions need no runtime.
 */

/** What keying a request gave: its key, a bypass (never served), or a 400 (never served). */
export type Outcome = { key: string } | { bypass: string } | { invalid: string };

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type Path = ReadonlyArray<string | number>;

/** A seeded PRNG (mulberry32, the evaluation's own): the same mutations on every run. */
export const rng = seeded;

/** `/a/0/b` for a path; `*` matches any array index in a pattern. */
export const pointer = (path: Path): string => `/${path.join("/")}`;

/**
 * Whether `path` matches `pattern` (`/messages/* /content`, written without the space): `*` is any one
 * segment; a pattern ending in `/**` also matches every path below it.
 */
export function matches(pattern: string, path: Path): boolean {
  const deep = pattern.endsWith("/**");
  const parts = (deep ? pattern.slice(0, -3) : pattern).split("/").slice(1);
  if (deep ? path.length < parts.length : path.length !== parts.length) return false;
  return parts.every((p, i) => p === "*" || p === String(path[i]));
}

/** Every path in `value` (objects' fields, arrays' items), parents before children. */
export function pathsOf(value: Json, at: Path = []): Path[] {
  const out: Path[] = [];
  if (Array.isArray(value)) value.forEach((v, i) => out.push([...at, i], ...pathsOf(v, [...at, i])));
  else if (value !== null && typeof value === "object") for (const [k, v] of Object.entries(value)) out.push([...at, k], ...pathsOf(v, [...at, k]));
  return out;
}

const clone = <T extends Json>(v: T): T => structuredClone(v);

function getAt(root: Json, path: Path): Json {
  let v: Json = root;
  for (const seg of path) v = (v as Record<string | number, Json>)[seg];
  return v;
}

/** `root` with the value at `path` replaced (`undefined`: removed; from an array, spliced out). */
export function setAt(root: Json, path: Path, value: Json | undefined): Json {
  const out = clone(root);
  const parent = getAt(out, path.slice(0, -1)) as Record<string | number, Json> | Json[];
  const last = path[path.length - 1];
  if (value !== undefined) (parent as Record<string | number, Json>)[last] = value;
  else if (Array.isArray(parent)) parent.splice(last as number, 1);
  else delete (parent as Record<string, Json>)[last as string];
  return out;
}

/** One change of one path: a label and the whole mutated request. */
export interface Mutation {
  path: Path;
  label: string;
  body: Json;
}

const SPELLING = "@@fuzz-number@@";

/** The body's text a keyed request was sent with: `raw` when a mutation re-spelled a number, else as JSON.stringify writes it. */
export function rawOf(request: Json): string {
  const { body, raw } = request as { body: unknown; raw?: unknown };
  return typeof raw === "string" ? raw : JSON.stringify(body);
}

const WORDS = ["alpha", "Beta", "gamma delta", "0", "é", "x".repeat(9), "tool", "user"];

/** Another value of the same JSON type, and one of another type, chosen by `rand`. */
function otherValues(v: Json, rand: () => number): Array<[string, Json]> {
  const word = WORDS[Math.floor(rand() * WORDS.length)];
  if (typeof v === "string") {
    // A JSON text (tool-call arguments) changes inside, keeping it JSON.
    const parsed = jsonOf(v);
    const inner: Array<[string, Json]> =
      parsed !== undefined ? [["json changed", JSON.stringify({ ...(isObj(parsed) ? parsed : { v: parsed }), fuzz: word })]] : [];
    return [...inner, ["other string", `${v}${word}`], ["to number", 7], ...(v === "" ? [] : ([["emptied", ""]] as Array<[string, Json]>))];
  }
  if (typeof v === "number")
    return [
      ["other number", v + 1 + Math.floor(rand() * 5)],
      ["to string", String(v)],
      ["to zero", v === 0 ? 1 : 0],
    ];
  if (typeof v === "boolean")
    return [
      ["flipped", !v],
      ["to string", String(v)],
    ];
  if (v === null) return [["to string", word]];
  if (Array.isArray(v)) {
    const out: Array<[string, Json]> = v.length > 0 ? [["emptied", []]] : [["item added", [WORDS[0]]]];
    if (v.length > 1) out.push(["reversed", [...v].reverse()]);
    if (v.length > 2) out.push(["first two swapped", [v[1], v[0], ...v.slice(2)]]);
    if (v.length > 0) out.push(["duplicated item", [...v, v[v.length - 1]]]);
    return out;
  }
  return [
    ["field added", { ...v, [`fuzz_${word.replace(/\W/g, "")}`]: word }],
    ["to string", word],
  ];
}

const isObj = (v: unknown): v is Record<string, Json> => typeof v === "object" && v !== null && !Array.isArray(v);

function jsonOf(text: string): Json | undefined {
  if (!/^\s*[[{]/.test(text)) return undefined;
  try {
    return JSON.parse(text) as Json;
  } catch {
    return undefined;
  }
}

/** The mutations of every path of `base` (another value, another type, removed), and `added` fields set where absent. */
export function mutationsOf(base: Json, seed: number, added: ReadonlyArray<[string, Json]> = []): Mutation[] {
  const rand = rng(seed);
  const out: Mutation[] = [];
  for (const path of pathsOf(base)) {
    const v = getAt(base, path);
    for (const [label, value] of otherValues(v, rand)) out.push({ path, label, body: setAt(base, path, value) });
    // A null field is an absent one to every API (docs/reliability.md, "The ignore list"): removing it changes nothing.
    if (v !== null) out.push({ path, label: "removed", body: setAt(base, path, undefined) }, { path, label: "to null", body: setAt(base, path, null) });
  }
  // A number spelled otherwise than JSON.stringify writes it (`2` as `2.0`, `0.2` as `0.20`): the same value to
  // JSON.parse, another text to an upstream that keeps it (docs/reliability.md, "Numbers"). The request's `raw`.
  for (const path of pathsOf(base)) {
    const v = getAt(base, path);
    if (path[0] !== "body" || typeof v !== "number") continue;
    const text = Number.isInteger(v) ? `${v}.0` : `${v}0`;
    const marked = setAt(base, path, SPELLING) as Record<string, Json>;
    const raw = JSON.stringify(marked.body).replace(JSON.stringify(SPELLING), text);
    out.push({ path, label: "respelled", body: { ...(base as Record<string, Json>), raw } });
  }
  for (const [at, value] of added) {
    const path = at
      .split("/")
      .slice(1)
      .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
    out.push({ path, label: "added", body: setAt(base, path, value) });
  }
  return out;
}

/**
 * Changes the docs say do not change the answer: a path pattern, or a pattern and a mutation's label
 * (`/headers field added`), and the reason (as docs/reliability.md words it).
 */
export type Allowed = Readonly<Record<string, string>>;

/** Why a mutation that kept the key is allowed to, or null. */
export function allowedBy(allowed: Allowed, path: Path, label: string): string | null {
  for (const [entry, reason] of Object.entries(allowed)) {
    const at = entry.indexOf(" ");
    const pattern = at < 0 ? entry : entry.slice(0, at);
    // A null field is an absent one (docs/reliability.md, "The ignore list"): what may be removed may be null.
    const wanted = at < 0 ? null : entry.slice(at + 1);
    if (matches(pattern, path) && (wanted === null || wanted === label || (wanted === "removed" && label === "to null"))) return reason;
  }
  return null;
}

/**
 * Runs every mutation of `base` through `keyOf`: each must change the key, bypass or be rejected, unless its
 * path is allowed. Returns the gaps (mutations that kept the key on a path not allowed) and counts.
 */
export function fuzz(
  base: Json,
  keyOf: (body: Json) => Outcome,
  allowed: Allowed,
  seed: number,
  added: ReadonlyArray<[string, Json]> = [],
): { gaps: string[]; changed: number; bypassed: number; allowedSame: number; total: number } {
  const baseKey = keyOf(base);
  expect(baseKey, "the base request is keyed").toHaveProperty("key");
  const gaps: string[] = [];
  let changed = 0;
  let bypassed = 0;
  let allowedSame = 0;
  const mutations = mutationsOf(base, seed, added);
  for (const m of mutations) {
    const out = keyOf(m.body);
    if (!("key" in out)) bypassed++;
    else if (out.key !== (baseKey as { key: string }).key) changed++;
    else if (allowedBy(allowed, m.path, m.label)) allowedSame++;
    else gaps.push(`${pointer(m.path)} ${m.label}`);
  }
  return { gaps, changed, bypassed, allowedSame, total: mutations.length };
}

/** Every documented path of `documented` occurs in `base` or among `added`: the base is as wide as the list. */
export function missingPaths(base: Json, documented: readonly string[], added: ReadonlyArray<[string, Json]>): string[] {
  const present = pathsOf(base);
  return documented.filter((d) => !present.some((p) => matches(d, p)) && !added.some(([a]) => matches(d, a.split("/").slice(1))));
}
