/// <reference types="vite/client" />
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { chatKey, check, checkParams, fieldsOf, MIN_PAIRS_PER_FIELD, UNKEYED_CHAT, UNKEYED_MESSAGES, value } from "./key-oracle.support";
import openaiDts from "../../node_modules/openai/resources/chat/completions/completions.d.ts?raw";
import reliabilityMd from "../../docs/reliability.md?raw";

/** The differential key oracle (key-oracle.support.ts) on Chat Completions, and the documented ignore list it checks against; Anthropic Messages in key-oracle.anthropic.test.ts. */

/** `v` with every object's keys in sorted order (RFC 8785 orders keys so: what canonical JSON leaves of key order). */
function sortedKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortedKeys);
  if (v === null || typeof v !== "object") return v;
  const entries = Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return entries.map(([k, x]) => [k, sortedKeys(x)]);
}

/** The backquoted names in a piece of markdown, in order. */
const codeNames = (text: string) => [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1]);

describe("the documented ignore list", () => {
  const row = reliabilityMd.split("\n").find((line) => line.startsWith("| request parameters "));

  it("Should find docs/reliability.md's ignore-list row of request parameters", () => {
    expect(row).toBeDefined();
  });

  it("Should list in docs/reliability.md exactly the unkeyed chat and Anthropic parameters this oracle checks", () => {
    const what = row!.split("|")[1];
    const anthropicAt = what.indexOf("(Anthropic:");
    expect(anthropicAt).toBeGreaterThan(0);
    expect(codeNames(what.slice(0, anthropicAt)).sort()).toEqual([...UNKEYED_CHAT].sort());
    expect(codeNames(what.slice(anthropicAt)).sort()).toEqual([...UNKEYED_MESSAGES].sort());
  });
});

describe("differential key oracle: OpenAI chat completions", () => {
  const base = { model: "m", messages: [{ role: "user", content: "hi" }] };
  const params = fieldsOf(openaiDts, "ChatCompletionCreateParamsBase").filter((f) => f !== "messages");
  /** Values the schema accepts for the parameters it types (any other value is a 400, so would compare nothing). */
  const TYPED_PARAMS: Record<string, fc.Arbitrary<unknown>> = {
    model: fc.string({ minLength: 1 }),
    stream: fc.boolean(),
    stream_options: fc.record({ include_usage: fc.boolean() }),
    modalities: fc.constantFrom([], ["text"]),
    tools: fc.array(
      fc.record({
        type: fc.constant("function"),
        function: fc.record({ name: fc.string({ minLength: 1 }), parameters: fc.dictionary(fc.string({ minLength: 1, maxLength: 4 }), value, { maxKeys: 2 }) }),
      }),
      { minLength: 1, maxLength: 2 },
    ),
  };
  /** Parameters whose every value that can change the answer bypasses the cache (docs/reliability.md, "Other bypass reasons from the key"), each with one. */
  const BYPASSING: Record<string, unknown> = { n: 2, logprobs: true, top_logprobs: 2, audio: { voice: "alloy", format: "mp3" }, web_search_options: {} };

  it("Should read the request fields from the SDK's ChatCompletionCreateParamsBase", () => {
    expect(params).toEqual(
      expect.arrayContaining(["model", "tools", "tool_choice", "seed", "functions", "function_call", "response_format", "stream", ...UNKEYED_CHAT]),
    );
  });

  it("Should key every request parameter except the documented unkeyed ones, comparing enough pairs of each", () => {
    const checked = checkParams(params, BYPASSING, TYPED_PARAMS, UNKEYED_CHAT, (field, v) => chatKey({ ...base, [field]: v }));
    expect(checked).toEqual(expect.arrayContaining(["response_format", ...UNKEYED_CHAT]));
  });

  it("Should bypass the cache for n > 1, logprobs, top_logprobs, audio and web_search_options", () => {
    for (const [field, v] of Object.entries(BYPASSING)) expect(chatKey({ ...base, [field]: v }), field).toEqual({ ok: false });
    expect(params).toEqual(expect.arrayContaining(Object.keys(BYPASSING)));
  });

  const roles: Array<[string, string, Record<string, unknown>]> = [
    ["ChatCompletionSystemMessageParam", "system", { content: "s" }],
    ["ChatCompletionDeveloperMessageParam", "developer", { content: "d" }],
    ["ChatCompletionUserMessageParam", "user", { content: "u" }],
    ["ChatCompletionAssistantMessageParam", "assistant", { content: "a" }],
    ["ChatCompletionFunctionMessageParam", "function", { name: "f", content: "r" }],
  ];
  /** Message fields whose values are read with a fixed meaning (each has its own test below or in canonical.test.ts). */
  const TYPED: Record<string, fc.Arbitrary<unknown>> = {
    content: fc.string({ minLength: 1 }),
    name: fc.string({ minLength: 1 }),
    refusal: fc.string({ minLength: 1 }),
    tool_calls: fc.array(
      fc.record({ id: fc.constant("c"), type: fc.constant("function"), function: fc.record({ name: fc.string({ minLength: 1 }), arguments: fc.json() }) }),
      { minLength: 1, maxLength: 2 },
    ),
    function_call: fc.record({ name: fc.string({ minLength: 1 }), arguments: fc.json() }),
  };
  /** Message fields that make the request bypass the cache (an assistant message's `audio`: a recorded answer cannot be replayed with it), each with a value. */
  const BYPASSING_MESSAGE_FIELDS: Record<string, unknown> = { audio: { id: "audio_1" } };
  /** What a tool call says once its id is renumbered and its arguments canonical: two calls that say the same get one key. */
  const callMeaning = (field: string, v: unknown): string => {
    const calls = (field === "tool_calls" ? v : [{ function: v }]) as Array<{ function: { name: string; arguments: string } }>;
    return JSON.stringify(calls.map((c) => [c.function.name, sortedKeys(JSON.parse(c.function.arguments))]));
  };
  for (const [type, role, fields] of roles) {
    it(`Should key every field of ${type}, comparing enough pairs of each`, () => {
      const names = fieldsOf(openaiDts, type).filter((f) => f !== "role");
      expect(names.length).toBeGreaterThan(0);
      for (const field of names) {
        const withField = (v: unknown) =>
          chatKey({
            model: "m",
            messages: [
              { role: "user", content: "q" },
              { role, ...fields, [field]: v },
              { role: "user", content: "next" },
            ],
          });
        if (field in BYPASSING_MESSAGE_FIELDS) {
          expect(withField(BYPASSING_MESSAGE_FIELDS[field]), `${type}.${field}`).toEqual({ ok: false });
          continue;
        }
        const typed = TYPED[field];
        let compared = 0;
        if (!typed) compared = check(`${type}.${field}`, withField, false);
        else
          fc.assert(
            fc.property(typed, typed, (a, b) => {
              const ka = withField(a);
              const kb = withField(b);
              if (!ka?.ok || !kb?.ok) return;
              compared++;
              const isCall = field === "tool_calls" || field === "function_call";
              const same = isCall ? callMeaning(field, a) === callMeaning(field, b) : JSON.stringify(a) === JSON.stringify(b);
              if (same) expect(ka.key, field).toBe(kb.key);
              else expect(ka.key, field).not.toBe(kb.key);
            }),
            { numRuns: 25 },
          );
        expect(compared, `${type}.${field}`).toBeGreaterThanOrEqual(MIN_PAIRS_PER_FIELD);
      }
    });
  }

  it("Should give equal keys to requests that differ only in tool-call ids and argument key order or spacing", () => {
    const args = fc.dictionary(fc.string({ minLength: 1, maxLength: 6 }), fc.oneof(fc.string(), fc.integer(), fc.boolean()), { maxKeys: 5 });
    fc.assert(
      fc.property(args, fc.string({ minLength: 1 }), fc.string({ minLength: 1 }), (a, id1, id2) => {
        const convo = (id: string, text: string) => ({
          model: "m",
          messages: [
            { role: "user", content: "q" },
            { role: "assistant", content: null, tool_calls: [{ id, type: "function", function: { name: "f", arguments: text } }] },
            { role: "tool", tool_call_id: id, content: "r" },
          ],
        });
        const reordered = JSON.stringify(Object.fromEntries(Object.entries(a).reverse()), null, 2);
        const k1 = chatKey(convo(id1, JSON.stringify(a)));
        const k2 = chatKey(convo(id2, reordered));
        expect(k1?.ok && k2?.ok && k1.key === k2.key).toBe(true);
      }),
      { numRuns: 50 },
    );
  });
});
