/** True when some string in `value` holds a lone UTF-16 surrogate (not valid Unicode text; RFC 8785 cannot serialise it). */
export function hasLoneSurrogate(value: unknown): boolean {
  if (typeof value === "string") return /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(value);
  if (Array.isArray(value)) return value.some(hasLoneSurrogate);
  if (value && typeof value === "object") return Object.entries(value).some(([k, v]) => hasLoneSurrogate(k) || hasLoneSurrogate(v));
  return false;
}
