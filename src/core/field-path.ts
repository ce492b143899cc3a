/** Field paths as the explanation writes them (`tool_calls[0].function.arguments.amount_cents`). Pure. */

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;

/** One step of a field path: an object key or an array index. */
export type Segment = string | number;

/** `path` joined with an object key: `.key`, or `["key"]` when the key is not a plain name. */
export function fieldPath(path: string, key: Segment): string {
  if (typeof key === "number") return `${path}[${key}]`;
  if (IDENTIFIER.test(key)) return path === "" ? key : `${path}.${key}`;
  return `${path}[${JSON.stringify(key)}]`;
}
