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
