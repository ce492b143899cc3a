/// <reference types="vite/client" />
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fieldsOf, pair } from "./key-oracle.support";
import responsesDts from "../../node_modules/openai/resources/responses/responses.d.ts?raw";
import compatMd from "../../docs/compat.md?raw";
import { keyResponsesRequest } from "../../src/providers/responses/key";
import { responsesRequest } from "../../src/providers/responses/schema";

/**
 * The differential key oracle of test/unit/key-oracle.test.ts, for the
 * Responses API: every field of the SDK's `ResponseCreateParamsBase` (a field
 * a new SDK adds is tested the day it is installed) changes the key, unless
 * it is on the documented list of parameters left out of the frame (then it
 * never does) or the request bypasses the cache. The list is written out
 * here, not imported from src/providers/responses/frame.ts (an oracle that
 * read the code's own list would agree with any change to it), and checked
 * against docs/compat.md.
 */

/** Responses parameters that are not keyed (docs/compat.md, the Responses "**Frame.**" item). */
const UNKEYED = [
  "stream",
  "stream_options",
  "service_tier",
  "metadata",
  "user",
  "safety_identifier",
  "prompt_cache_key",
  "prompt_cache_retention",
  "store",
  "background",
  "previous_response_id",
  "conversation",
];
/** Parameters the same item leaves out only when they ask for nothing (an empty list); any other value is keyed. */
const UNKEYED_WHEN_EMPTY = ["include"];
/** Unkeyed parameters the SDK's types do not list (Codex's telemetry), checked on their own below. */
const UNKEYED_OUTSIDE_SDK = ["client_metadata"];

/** Values the schema accepts and the frame keys for the parameters it types (any other value is a 400 or a bypass, so would compare nothing). */
const TYPED_PARAMS: Record<string, fc.Arbitrary<unknown>> = {
  model: fc.string({ minLength: 1 }),
  instructions: fc.string({ minLength: 1 }),
  tools: fc.array(fc.record({ type: fc.constant("function"), name: fc.string({ minLength: 1 }), parameters: fc.constant({ type: "object" }) }), {
    minLength: 1,
    maxLength: 2,
  }),
  include: fc.constantFrom([], ["reasoning.encrypted_content"], ["reasoning.encrypted_content", "reasoning.encrypted_content"]),
  stream: fc.boolean(),
  // These bypass the cache when they ask for server-side state (below); what is left is the value that asks for nothing.
  store: fc.constantFrom(false, null),
  background: fc.constantFrom(false, null),
  previous_response_id: fc.constantFrom("", null),
};
/** Parameters any value of which bypasses the cache (server-side state, logprobs): never compared, checked to bypass. */
const BYPASSING: Record<string, unknown> = { conversation: "conv_1", prompt: { id: "pmpt_1" }, top_logprobs: 2 };
/** Values of the parameters typed above that bypass the cache. */
const BYPASSING_VALUES: Array<[string, unknown]> = [
  ["store", true],
  ["background", true],
  ["previous_response_id", "resp_1"],
  ["include", ["message.output_text.logprobs"]],
];

/** Each field must have been compared on at least this many pairs (of 25 runs) where both requests were keyed (see key-oracle.test.ts). */
const MIN_PAIRS_PER_FIELD = 20;

function responsesKey(body: Record<string, unknown>): { ok: true; key: string } | { ok: false } | null {
  const parsed = responsesRequest.safeParse(body);
  if (!parsed.success) return null; // a 400 at the route
  const keyed = keyResponsesRequest(parsed.data, { tenant: "t", namespace: "default", maxMessageBytes: 900_000 });
  return keyed.ok ? { ok: true, key: keyed.key.key } : { ok: false };
}

describe("the documented Responses frame", () => {
  it("Should list in docs/compat.md exactly the unkeyed Responses parameters this oracle checks", () => {
    const item = compatMd.split("\n- ").find((text) => text.startsWith("**Frame.** Every body field but `input` is keyed"));
    expect(item).toBeDefined();
    const except = item!.slice(item!.search(/\), except\s/), item!.indexOf("when they ask for nothing"));
    const names = [...except.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
    expect([...new Set(names)].sort()).toEqual([...UNKEYED, ...UNKEYED_WHEN_EMPTY, ...UNKEYED_OUTSIDE_SDK].sort());
  });
});

describe("differential key oracle: OpenAI Responses", () => {
  const base = { model: "m", input: "hi" };
  const params = fieldsOf(responsesDts, "ResponseCreateParamsBase").filter((f) => f !== "input");

  it("Should read the request fields from the SDK's ResponseCreateParamsBase", () => {
    expect(params).toEqual(expect.arrayContaining(["model", "instructions", "tools", "tool_choice", "text", "reasoning", ...UNKEYED, ...UNKEYED_WHEN_EMPTY]));
  });

  it("Should key every request parameter except the documented unkeyed ones, comparing enough pairs of each", () => {
    let total = 0;
    const checked = params.filter((f) => !(f in BYPASSING));
    for (const field of checked) {
      const values = TYPED_PARAMS[field];
      const pairs = values ? fc.tuple(values, values).filter(([a, b]) => JSON.stringify(a) !== JSON.stringify(b)) : pair;
      let compared = 0;
      fc.assert(
        fc.property(pairs, ([a, b]) => {
          const ka = responsesKey({ ...base, [field]: a });
          const kb = responsesKey({ ...base, [field]: b });
          if (!ka || !kb || !ka.ok || !kb.ok) return; // rejected or bypassed: never served from the cache
          compared++;
          if (UNKEYED.includes(field)) expect(ka.key, `${field}: documented as not keyed`).toBe(kb.key);
          else expect(ka.key, `${field}: keyed`).not.toBe(kb.key);
        }),
        { numRuns: 25 },
      );
      expect(compared, field).toBeGreaterThanOrEqual(MIN_PAIRS_PER_FIELD);
      total += compared;
    }
    expect(checked).toEqual(expect.arrayContaining(UNKEYED.filter((f) => !(f in BYPASSING))));
    expect(total).toBeGreaterThanOrEqual(checked.length * MIN_PAIRS_PER_FIELD);
  });

  it("Should not key Codex's client_metadata (telemetry: thread, turn and session ids), comparing enough pairs", () => {
    let compared = 0;
    fc.assert(
      fc.property(
        fc.tuple(
          fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.string(), { minKeys: 1 }),
          fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.string(), { minKeys: 1 }),
        ),
        ([a, b]) => {
          const ka = responsesKey({ ...base, client_metadata: a });
          const kb = responsesKey({ ...base, client_metadata: b });
          if (!ka || !kb || !ka.ok || !kb.ok) return;
          compared++;
          expect(ka.key).toBe(kb.key);
        },
      ),
      { numRuns: 25 },
    );
    expect(compared).toBeGreaterThanOrEqual(MIN_PAIRS_PER_FIELD * UNKEYED_OUTSIDE_SDK.length);
  });

  it("Should bypass the cache for a conversation, a stored prompt, logprobs and the server-side state store, background and previous_response_id ask for", () => {
    for (const [field, v] of [...Object.entries(BYPASSING), ...BYPASSING_VALUES]) expect(responsesKey({ ...base, [field]: v }), field).toEqual({ ok: false });
    expect(params).toEqual(expect.arrayContaining(Object.keys(BYPASSING)));
  });

  it("Should give the key of a request without them to conversation, store, background, previous_response_id and include asking for nothing", () => {
    const absent = responsesKey(base);
    expect(absent?.ok).toBe(true);
    for (const [field, v] of [
      ["conversation", null],
      ["store", false],
      ["background", false],
      ["previous_response_id", null],
      ["include", []],
    ] as const) {
      expect(responsesKey({ ...base, [field]: v }), field).toEqual(absent);
    }
    expect(responsesKey({ ...base, include: ["reasoning.encrypted_content"] })).not.toEqual(absent);
  });
});
