import fc from "fast-check";

/** The shared parts of the differential key oracles (key-oracle.test.ts, key-oracle.responses.test.ts, key-oracle.nested.test.ts). */

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
