import fc from "fast-check";
import { expect } from "vitest";
import { keyMessagesRequest } from "../../src/providers/anthropic/key";
import { messagesRequest } from "../../src/providers/anthropic/schema";
import { keyRequest } from "../../src/providers/chat/key";
import { chatRequest } from "../../src/core/messages";

/** The shared parts of the differential key oracles (key-oracle.test.ts, key-oracle.anthropic.test.ts, key-oracle.responses.test.ts, key-oracle.nested.test.ts). */

/** Member names of `export interface <name>` in a .d.ts text (top level of the interface only). */
export function fieldsOf(dts: string, name: string): string[] {
  const start = dts.search(new RegExp(`export interface ${name}\\b[^{]*\\{`));
  if (start < 0) throw new Error(`interface ${name} not found`);
  const fields: string[] = [];
  let depth = 0;
  for (const line of dts.slice(start).split("\n")) {
    const m = depth === 1 ? /^\s*(\w+)\??:/.exec(line) : null;
    if (m) fields.push(m[1]);
    depth += (line.match(/\{/g) ?? []).length - (line.match(/\}/g) ?? []).length;
    if (depth === 0 && fields.length > 0) break;
  }
  return fields;
}

export const value = fc.oneof(
  fc.string({ minLength: 1 }),
  fc.integer(),
  fc.boolean(),
  fc.dictionary(fc.string({ minLength: 1, maxLength: 4 }), fc.oneof(fc.string(), fc.integer()), { minKeys: 1, maxKeys: 3 }),
);
export const pair = fc.tuple(value, value).filter(([a, b]) => JSON.stringify(a) !== JSON.stringify(b));

/**
 * The differential key oracle: for every field the SDK type definitions list
 * (so a field added in a new SDK is tested the day the SDK is upgraded), two
 * requests that differ in that field alone get different keys, unless the
 * field is on the documented ignore list (docs/reliability.md, "What is in
 * the key"), where they get equal keys, or bypasses the cache, where neither
 * is cached.
 *
 * The ignore list is written out here, not imported from src/: an oracle that
 * read the code's own list would agree with any change to it (adding
 * `response_format` to it, a wrong replay across JSON schemas, would pass).
 * A test checks that docs/reliability.md's table says the same.
 */

/** Chat Completions request parameters that are not keyed (docs/reliability.md, "The ignore list", first row). */
export const UNKEYED_CHAT = ["stream", "stream_options", "user", "metadata", "store", "service_tier", "prompt_cache_key", "safety_identifier"];
/** Anthropic Messages request parameters that are not keyed (the same row, "Anthropic: …"). */
export const UNKEYED_MESSAGES = ["stream", "metadata", "service_tier"];

/**
 * Each field a differential check reads must have been compared on at least
 * this many generated pairs (of 25 runs) where both requests were keyed; a
 * field whose values are all rejected or bypassed would otherwise pass having
 * compared nothing (before this floor, `model`, `tools` and `stream` on chat,
 * and `model`, `system`, `tools`, `tool_choice` and `stream` on Anthropic,
 * compared none). Every field compares all 25 today: the schema accepts every
 * value generated for it. Fields that bypass the cache are listed apart and
 * checked to bypass.
 */
export const MIN_PAIRS_PER_FIELD = 20;

export type Keyed = { ok: true; key: string } | { ok: false };

export function chatKey(body: Record<string, unknown>): Keyed | null {
  const parsed = chatRequest.safeParse(body);
  if (!parsed.success) return null; // a 400 at the route: nothing to compare
  const keyed = keyRequest(parsed.data, "t", "default");
  return keyed.ok ? { ok: true, key: keyed.key.key } : { ok: false };
}

export function messagesKey(body: Record<string, unknown>): Keyed | null {
  const parsed = messagesRequest.safeParse(body);
  if (!parsed.success) return null;
  const keyed = keyMessagesRequest(parsed.data, new Headers(), "t", "default");
  return keyed.ok ? { ok: true, key: keyed.key.key } : { ok: false };
}

/** Pairs of different values drawn from `values`. */
export const pairOf = (values: fc.Arbitrary<unknown>) => fc.tuple(values, values).filter(([a, b]) => JSON.stringify(a) !== JSON.stringify(b));

/**
 * Asserts the differential rule for one field over generated value pairs
 * (equal keys when `ignored`, different ones otherwise) and returns how many
 * pairs it compared: those where both requests were keyed.
 */
export function check(field: string, keyOf: (a: unknown) => Keyed | null, ignored: boolean, pairs: fc.Arbitrary<[unknown, unknown]> = pair): number {
  let compared = 0;
  fc.assert(
    fc.property(pairs, ([a, b]) => {
      const ka = keyOf(a);
      const kb = keyOf(b);
      if (!ka || !kb || !ka.ok || !kb.ok) return; // rejected or bypassed: never served from the cache
      compared++;
      if (ignored) expect(ka.key, `${field}: documented as not keyed`).toBe(kb.key);
      else expect(ka.key, `${field}: keyed`).not.toBe(kb.key);
    }),
    { numRuns: 25 },
  );
  return compared;
}

/**
 * The differential rule for every request parameter in `params` but those in `bypassing`: `keyOf(field, value)`
 * keys a request with that one field set, drawn from `typed[field]` where the schema types it; each field must
 * compare at least MIN_PAIRS_PER_FIELD pairs. Returns the fields checked.
 */
export function checkParams(
  params: readonly string[],
  bypassing: Record<string, unknown>,
  typed: Record<string, fc.Arbitrary<unknown>>,
  unkeyed: readonly string[],
  keyOf: (field: string, value: unknown) => Keyed | null,
): string[] {
  let total = 0;
  const checked = params.filter((f) => !(f in bypassing));
  for (const field of checked) {
    const values = typed[field];
    const compared = check(field, (v) => keyOf(field, v), unkeyed.includes(field), values ? pairOf(values) : pair);
    expect(compared, field).toBeGreaterThanOrEqual(MIN_PAIRS_PER_FIELD);
    total += compared;
  }
  expect(total).toBeGreaterThanOrEqual(checked.length * MIN_PAIRS_PER_FIELD);
  return checked;
}
