/// <reference types="vite/client" />
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import responsesDts from "../../node_modules/openai/resources/responses/responses.d.ts?raw";
import { IGNORED } from "../../src/cache/responses/frame";
import { keyResponsesRequest } from "../../src/cache/responses/key";
import { responsesRequest } from "../../src/cache/responses/schema";

/**
 * The differential key oracle of test/unit/key-oracle.test.ts, for the
 * Responses API: every field of the SDK's `ResponseCreateParamsBase` (a field
 * a new SDK adds is tested the day it is installed) changes the key, unless
 * it is on the frame's documented ignore list (then it never does) or the
 * request bypasses the cache.
 */

/** Member names of `export interface <name>` in a .d.ts text (top level of the interface only). */
function fieldsOf(dts: string, name: string): string[] {
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

const value = fc.oneof(fc.string({ minLength: 1 }), fc.integer(), fc.boolean(), fc.dictionary(fc.string({ minLength: 1, maxLength: 4 }), fc.oneof(fc.string(), fc.integer()), { minKeys: 1, maxKeys: 3 }));
const pair = fc.tuple(value, value).filter(([a, b]) => JSON.stringify(a) !== JSON.stringify(b));

function responsesKey(body: Record<string, unknown>): { ok: true; key: string } | { ok: false } | null {
  const parsed = responsesRequest.safeParse(body);
  if (!parsed.success) return null; // a 400 at the route
  const keyed = keyResponsesRequest(parsed.data, { tenant: "t", namespace: "default", maxMessageBytes: 900_000 });
  return keyed.ok ? { ok: true, key: keyed.key.key } : { ok: false };
}

describe("differential key oracle: OpenAI Responses", () => {
  const base = { model: "m", input: "hi" };
  const params = fieldsOf(responsesDts, "ResponseCreateParamsBase").filter((f) => f !== "input");

  it("Should read the request fields from the SDK's ResponseCreateParamsBase", () => {
    expect(params).toEqual(expect.arrayContaining(["model", "instructions", "tools", "tool_choice", "text", "reasoning", "store", "previous_response_id"]));
  });

  it("Should key every request parameter except the documented ignore list", () => {
    for (const field of params) {
      fc.assert(
        fc.property(pair, ([a, b]) => {
          const ka = responsesKey({ ...base, [field]: a });
          const kb = responsesKey({ ...base, [field]: b });
          if (!ka || !kb || !ka.ok || !kb.ok) return; // rejected or bypassed: never served from the cache
          if (IGNORED.has(field)) expect(ka.key, field).toBe(kb.key);
          else expect(ka.key, field).not.toBe(kb.key);
        }),
        { numRuns: 25 },
      );
    }
  });
});
