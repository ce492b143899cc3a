/// <reference types="vite/client" />
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fieldsOf, pair } from "./key-oracle.support";
import responsesDts from "../../node_modules/openai/resources/responses/responses.d.ts?raw";
import { IGNORED } from "../../src/providers/responses/frame";
import { keyResponsesRequest } from "../../src/providers/responses/key";
import { responsesRequest } from "../../src/providers/responses/schema";

/**
 * The differential key oracle of test/unit/key-oracle.test.ts, for the
 * Responses API: every field of the SDK's `ResponseCreateParamsBase` (a field
 * a new SDK adds is tested the day it is installed) changes the key, unless
 * it is on the frame's documented ignore list (then it never does) or the
 * request bypasses the cache.
 */


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
