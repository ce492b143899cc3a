/**
 * Whether every field of `value` outside `read` is null or absent: a check
 * that a canonical form, an assembler or a replay that reads only `read`
 * drops nothing the sender gave (else the request bypasses, or the answer is
 * not recorded). Pure.
 *
 * @example onlyFields({ type: "text", text: "hi", extra: null }, new Set(["type", "text"])) // true
 */
export function onlyFields(value: object, read: ReadonlySet<string>): boolean {
  return Object.entries(value).every(([k, v]) => read.has(k) || v === null || v === undefined);
}

/** Whether a value is a JSON object (not null, not an array). */
export function isFields(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The fields of `source` outside `skip`, as sent (null values included, undefined ones left out); none when
 * `source` is not an object. Pure.
 *
 * @example fieldsBut({ id: "x", stop_reason: null }, new Set(["id"])) // { stop_reason: null }
 */
export function fieldsBut(source: unknown, skip: ReadonlySet<string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!isFields(source)) return out;
  for (const [name, value] of Object.entries(source)) if (!skip.has(name) && value !== undefined) out[name] = value;
  return out;
}
