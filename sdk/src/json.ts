/** A value that survives JSON.stringify / JSON.parse unchanged. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Thrown when a tool argument or a check capture cannot be stored faithfully. */
export class NotSerialisableError extends Error {
  constructor(
    readonly path: string,
    what: string,
  ) {
    super(`muscle-mem: ${what} at ${path || "<root>"} cannot be stored`);
    this.name = "NotSerialisableError";
  }
}

// Tagged values for what plain JSON cannot hold. Objects that happen to use the
// tag key are escaped, so every encoded value decodes to the value it came from.
const TAG = "$mm";

/**
 * Encodes a value into JSON, keeping what JSON.stringify would lose or mangle:
 * `undefined` (also inside arrays and objects), NaN, ±Infinity and -0.
 * Functions, symbols, bigints, cycles and class instances (Date, Map, Buffer…)
 * are refused with a {@link NotSerialisableError} rather than silently changed.
 * Objects with a null prototype are accepted and come back as plain objects.
 *
 * @example encodeValue([null, undefined, { b: 2, a: 1 }]) // [null, {"$mm":"undefined"}, {b:2, a:1}]
 */
export function encodeValue(value: unknown, path = "", seen: Set<object> = new Set()): Json {
  if (value === null) return null;
  switch (typeof value) {
    case "undefined":
      return { [TAG]: "undefined" };
    case "boolean":
    case "string":
      return value;
    case "number":
      if (Number.isFinite(value) && !Object.is(value, -0)) return value;
      return { [TAG]: "number", value: Object.is(value, -0) ? "-0" : String(value) };
    case "object":
      break;
    default:
      throw new NotSerialisableError(path, `a ${typeof value}`);
  }
  const obj = value as object;
  if (seen.has(obj)) throw new NotSerialisableError(path, "a cycle");
  seen.add(obj);
  try {
    if (Array.isArray(obj)) return obj.map((item, i) => encodeValue(item, `${path}[${i}]`, seen));
    const proto: unknown = Object.getPrototypeOf(obj);
    if (proto !== Object.prototype && proto !== null) {
      throw new NotSerialisableError(path, `an instance of ${obj.constructor?.name ?? "a class"}`);
    }
    const out: { [key: string]: Json } = {};
    for (const [k, v] of Object.entries(obj)) setOwn(out, k, encodeValue(v, `${path}.${k}`, seen));
    return TAG in out ? { [TAG]: "object", value: out } : out;
  } finally {
    seen.delete(obj);
  }
}

/** The inverse of {@link encodeValue}. */
export function decodeValue(json: Json): unknown {
  if (json === null || typeof json !== "object") return json;
  if (Array.isArray(json)) return json.map(decodeValue);
  const tag = json[TAG];
  if (tag === "undefined") return undefined;
  if (tag === "number") return Number(json.value);
  const source = tag === "object" && isObject(json.value) ? json.value : json;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(source)) setOwn(out, k, decodeValue(v));
  return out;
}

/** Sets an own property, even one named `__proto__`, which plain assignment would not. */
function setOwn(target: object, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** JSON with object keys sorted at every depth: equal values give equal strings. */
export function canonicalJson(value: Json): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(",")}}`;
}

export function isObject(value: unknown): value is { [key: string]: Json } {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Parses JSON text, answering undefined instead of throwing. */
export function tryParseJson(text: string): Json | undefined {
  try {
    return JSON.parse(text) as Json;
  } catch {
    return undefined;
  }
}
