const SURROGATE = /[\uD800-\uDFFF]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** True when some string in `value` holds a lone UTF-16 surrogate (not valid Unicode text; RFC 8785 cannot serialise it). */
export function hasLoneSurrogate(value: unknown): boolean {
  // Most text holds no surrogate at all: a plain class test rules that out before the lookaround test.
  if (typeof value === "string") return SURROGATE.test(value) && LONE_SURROGATE.test(value);
  if (Array.isArray(value)) return value.some(hasLoneSurrogate);
  if (value && typeof value === "object") {
    const record = value as Record<string, unknown>;
    for (const k of Object.keys(record)) if (hasLoneSurrogate(k) || hasLoneSurrogate(record[k])) return true;
  }
  return false;
}
