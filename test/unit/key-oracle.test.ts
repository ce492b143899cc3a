/// <reference types="vite/client" />
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fieldsOf, pair, value } from "./key-oracle.support";
import anthropicDts from "../../node_modules/@anthropic-ai/sdk/resources/messages/messages.d.ts?raw";
import openaiDts from "../../node_modules/openai/resources/chat/completions/completions.d.ts?raw";
import reliabilityMd from "../../docs/reliability.md?raw";
import { keyMessagesRequest } from "../../src/providers/anthropic/key";
import { messagesRequest } from "../../src/providers/anthropic/schema";
import { keyRequest } from "../../src/providers/chat/key";
import { chatRequest } from "../../src/core/messages";

/**
 * The differential key oracle: for every field the SDK type definitions list
 * (so a field added in a new SDK is tested the day the SDK is upgraded), two
 * requests that differ in that field alone get different keys, unless the
 * field is on the documented ignore list (docs/reliability.md, "What is in
 * the key"), where they get equal keys, or bypasses the cache, where neither
 * is cached.
 *
 * The ignore list is written out below, not imported from src/: an oracle that
 * read the code's own list would agree with any change to it (adding
 * `response_format` to it, a wrong replay across JSON schemas, would pass).
 * A test checks that docs/reliability.md's table says the same.
 */

/** Chat Completions request parameters that are not keyed (docs/reliability.md, "The ignore list", first row). */
const UNKEYED_CHAT = ["stream", "stream_options", "user", "metadata", "store", "service_tier", "prompt_cache_key", "safety_identifier"];
/** Anthropic Messages request parameters that are not keyed (the same row, "Anthropic: …"). */
const UNKEYED_MESSAGES = ["stream", "metadata", "service_tier"];

/**
 * Each field a differential check reads must have been compared on at least
 * this many generated pairs (of 25 runs) where both requests were keyed; a
 * field whose values are all rejected or bypassed would otherwise pass having
 * compared nothing (before this floor, `model`, `tools` and `stream` on chat,
 * and `model`, `system`, `tools`, `tool_choice` and `stream` on Anthropic,
 * compared none). Every field compares all 25 today: the schema accepts every
 * value generated for it. Fields that bypass the cache are listed apart and
 * checked to bypass.
 */
const MIN_PAIRS_PER_FIELD = 20;

type Keyed = { ok: true; key: string } | { ok: false };

function chatKey(body: Record<string, unknown>): Keyed | null {
  const parsed = chatRequest.safeParse(body);
  if (!parsed.success) return null; // a 400 at the route: nothing to compare
  const keyed = keyRequest(parsed.data, "t", "default");
  return keyed.ok ? { ok: true, key: keyed.key.key } : { ok: false };
}

function messagesKey(body: Record<string, unknown>): Keyed | null {
  const parsed = messagesRequest.safeParse(body);
  if (!parsed.success) return null;
  const keyed = keyMessagesRequest(parsed.data, new Headers(), "t", "default");
  return keyed.ok ? { ok: true, key: keyed.key.key } : { ok: false };
}

/** Pairs of different values drawn from `values`. */
const pairOf = (values: fc.Arbitrary<unknown>) => fc.tuple(values, values).filter(([a, b]) => JSON.stringify(a) !== JSON.stringify(b));

/**
 * Asserts the differential rule for one field over generated value pairs
 * (equal keys when `ignored`, different ones otherwise) and returns how many
 * pairs it compared: those where both requests were keyed.
 */
function check(field: string, keyOf: (a: unknown) => Keyed | null, ignored: boolean, pairs: fc.Arbitrary<[unknown, unknown]> = pair): number {
  let compared = 0;
  fc.assert(
    fc.property(pairs, ([a, b]) => {
      const ka = keyOf(a);
      const kb = keyOf(b);
      if (!ka || !kb || !ka.ok || !kb.ok) return; // rejected or bypassed: never served from the cache
      compared++;
      if (ignored) expect(ka.key, `${field}: documented as not keyed`).toBe(kb.key);
      else expect(ka.key, `${field}: keyed`).not.toBe(kb.key);
    }),
    { numRuns: 25 },
  );
  return compared;
}

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
    let total = 0;
    const checked = params.filter((f) => !(f in BYPASSING));
    for (const field of checked) {
      const values = TYPED_PARAMS[field];
      const compared = check(field, (v) => chatKey({ ...base, [field]: v }), UNKEYED_CHAT.includes(field), values ? pairOf(values) : pair);
      expect(compared, field).toBeGreaterThanOrEqual(MIN_PAIRS_PER_FIELD);
      total += compared;
    }
    expect(checked).toEqual(expect.arrayContaining(["response_format", ...UNKEYED_CHAT]));
    expect(total).toBeGreaterThanOrEqual(checked.length * MIN_PAIRS_PER_FIELD);
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

describe("differential key oracle: Anthropic messages", () => {
  const base = { model: "c", max_tokens: 16, messages: [{ role: "user", content: "hi" }] };
  const params = fieldsOf(anthropicDts, "MessageCreateParamsBase").filter((f) => f !== "messages");
  /** Values the schema accepts for the parameters it types (any other value is a 400, so would compare nothing). */
  const TYPED_PARAMS: Record<string, fc.Arbitrary<unknown>> = {
    thinking: fc.oneof(
      fc.constant({ type: "disabled" }),
      fc.integer({ min: 1024, max: 1_000_000 }).map((budget) => ({ type: "enabled", budget_tokens: budget })),
    ),
    model: fc.string({ minLength: 1 }),
    max_tokens: fc.integer({ min: 1, max: 1_000_000 }),
    system: fc.string({ minLength: 1 }),
    tools: fc.array(
      fc.record({
        name: fc.string({ minLength: 1 }),
        input_schema: fc.record({
          type: fc.constant("object"),
          properties: fc.dictionary(fc.string({ minLength: 1, maxLength: 4 }), fc.record({ type: fc.constantFrom("string", "number") }), { maxKeys: 2 }),
        }),
      }),
      { minLength: 1, maxLength: 2 },
    ),
    tool_choice: fc.oneof(
      fc.constantFrom({ type: "auto" }, { type: "any" }, { type: "none" }),
      fc.record({ type: fc.constant("tool"), name: fc.string({ minLength: 1 }) }),
    ),
    stream: fc.boolean(),
  };
  /** Parameters that make the request bypass the cache (a server-side container), each with a value. Thinking is keyed (its blocks are recorded and replayed). */
  const BYPASSING: Record<string, unknown> = { container: "container_1" };

  it("Should key every request parameter except the documented unkeyed ones, comparing enough pairs of each", () => {
    expect(params).toEqual(expect.arrayContaining(["model", "max_tokens", "system", "tools", "tool_choice", "stop_sequences", ...UNKEYED_MESSAGES]));
    let total = 0;
    const checked = params.filter((f) => !(f in BYPASSING));
    for (const field of checked) {
      const values = TYPED_PARAMS[field];
      const compared = check(field, (v) => messagesKey({ ...base, [field]: v }), UNKEYED_MESSAGES.includes(field), values ? pairOf(values) : pair);
      expect(compared, field).toBeGreaterThanOrEqual(MIN_PAIRS_PER_FIELD);
      total += compared;
    }
    expect(total).toBeGreaterThanOrEqual(checked.length * MIN_PAIRS_PER_FIELD);
  });

  it("Should bypass the cache for a server-side container", () => {
    for (const [field, v] of Object.entries(BYPASSING)) expect(messagesKey({ ...base, [field]: v }), field).toEqual({ ok: false });
    expect(params).toEqual(expect.arrayContaining(Object.keys(BYPASSING)));
  });

  const blocks: Array<[string, (extra: Record<string, unknown>) => unknown[], string[]]> = [
    ["TextBlockParam", (x) => [{ role: "user", content: [{ type: "text", text: "t", ...x }] }], ["type", "text"]],
    [
      "ToolUseBlockParam",
      (x) => [
        { role: "user", content: "q" },
        { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "f", input: {}, ...x }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "r" }] },
      ],
      ["type", "id", "name"],
    ],
    [
      "ToolResultBlockParam",
      (x) => [
        { role: "user", content: "q" },
        { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "f", input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "r", ...x }] },
      ],
      ["type", "tool_use_id"],
    ],
  ];
  /** The block-field ignore list: prompt-caching hints never change the answer. */
  const IGNORED_BLOCK_FIELDS = new Set(["cache_control"]);
  /** Block fields the schema types (any other value is a 400, so would compare nothing). */
  const TYPED_BLOCK_FIELDS: Record<string, fc.Arbitrary<unknown>> = { content: fc.string({ minLength: 1 }), is_error: fc.boolean() };
  for (const [type, messages, fixed] of blocks) {
    it(`Should key every field of ${type} except cache_control, comparing enough pairs of each`, () => {
      const names = fieldsOf(anthropicDts, type).filter((f) => !fixed.includes(f));
      expect(names.length).toBeGreaterThan(0);
      for (const field of names) {
        const values = TYPED_BLOCK_FIELDS[field];
        const compared = check(
          `${type}.${field}`,
          (v) => messagesKey({ ...base, messages: messages({ [field]: v }) }),
          IGNORED_BLOCK_FIELDS.has(field),
          values ? pairOf(values) : pair,
        );
        expect(compared, `${type}.${field}`).toBeGreaterThanOrEqual(MIN_PAIRS_PER_FIELD);
      }
    });
  }

  it("Should give equal keys to tool_use ids renamed and input key order changed", () => {
    const convo = (id: string, input: Record<string, unknown>) =>
      messagesKey({
        ...base,
        messages: [
          { role: "user", content: "q" },
          { role: "assistant", content: [{ type: "tool_use", id, name: "f", input }] },
          { role: "user", content: [{ type: "tool_result", tool_use_id: id, content: "r" }] },
        ],
      });
    const a = convo("toolu_a", { x: 1, y: "2" });
    const b = convo("toolu_b", { y: "2", x: 1 });
    expect(a?.ok && b?.ok && a.key === b.key).toBe(true);
  });
});
