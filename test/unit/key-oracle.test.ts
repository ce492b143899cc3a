/// <reference types="vite/client" />
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fieldsOf, pair } from "./key-oracle.support";
import anthropicDts from "../../node_modules/@anthropic-ai/sdk/resources/messages/messages.d.ts?raw";
import openaiDts from "../../node_modules/openai/resources/chat/completions/completions.d.ts?raw";
import { keyMessagesRequest } from "../../src/providers/anthropic/key";
import { messagesRequest } from "../../src/providers/anthropic/schema";
import { TRANSPORT_KEYS as ANTHROPIC_TRANSPORT } from "../../src/providers/anthropic/frame";
import { TRANSPORT_KEYS } from "../../src/core/frame";
import { keyRequest } from "../../src/providers/chat/key";
import { chatRequest } from "../../src/core/messages";

/**
 * The differential key oracle: for every field the SDK type definitions list
 * (so a field added in a new SDK is tested the day the SDK is upgraded), two
 * requests that differ in that field alone get different keys, unless the
 * field is on the documented ignore list (docs/reliability.md, "What is in
 * the key"), where they get equal keys, or on the bypass list, where neither
 * is cached.
 */


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

/** Asserts the differential rule for one field over generated value pairs. */
function check(keyOf: (a: unknown) => Keyed | null, ignored: boolean): void {
  fc.assert(
    fc.property(pair, ([a, b]) => {
      const ka = keyOf(a);
      const kb = keyOf(b);
      if (!ka || !kb || !ka.ok || !kb.ok) return; // rejected or bypassed: never served from the cache
      if (ignored) expect(ka.key).toBe(kb.key);
      else expect(ka.key).not.toBe(kb.key);
    }),
    { numRuns: 25 },
  );
}

describe("differential key oracle: OpenAI chat completions", () => {
  const base = { model: "m", messages: [{ role: "user", content: "hi" }] };
  const params = fieldsOf(openaiDts, "ChatCompletionCreateParamsBase").filter((f) => f !== "messages");

  it("Should read the request fields from the SDK's ChatCompletionCreateParamsBase", () => {
    expect(params).toEqual(expect.arrayContaining(["model", "tools", "tool_choice", "seed", "functions", "function_call", "response_format", "stream"]));
  });

  it("Should key every request parameter except the documented transport ones", () => {
    for (const field of params) check((v) => chatKey({ ...base, [field]: v }), TRANSPORT_KEYS.has(field));
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
    tool_calls: fc.array(fc.record({ id: fc.constant("c"), type: fc.constant("function"), function: fc.record({ name: fc.string({ minLength: 1 }), arguments: fc.json() }) }), { minLength: 1, maxLength: 2 }),
    function_call: fc.record({ name: fc.string({ minLength: 1 }), arguments: fc.json() }),
  };
  for (const [type, role, fields] of roles) {
    it(`Should key every field of ${type}`, () => {
      const names = fieldsOf(openaiDts, type).filter((f) => f !== "role");
      expect(names.length).toBeGreaterThan(0);
      for (const field of names) {
        const withField = (v: unknown) => chatKey({ model: "m", messages: [{ role: "user", content: "q" }, { role, ...fields, [field]: v }, { role: "user", content: "next" }] });
        const typed = TYPED[field];
        if (!typed) check(withField, false);
        else fc.assert(fc.property(typed, typed, (a, b) => {
          const ka = withField(a);
          const kb = withField(b);
          if (!ka?.ok || !kb?.ok) return;
          if (JSON.stringify(a) !== JSON.stringify(b) && !(field === "tool_calls" || field === "function_call")) expect(ka.key).not.toBe(kb.key);
        }), { numRuns: 25 });
      }
    });
  }

  it("Should give equal keys to requests that differ only in tool-call ids and argument key order or spacing", () => {
    const args = fc.dictionary(fc.string({ minLength: 1, maxLength: 6 }), fc.oneof(fc.string(), fc.integer(), fc.boolean()), { maxKeys: 5 });
    fc.assert(
      fc.property(args, fc.string({ minLength: 1 }), fc.string({ minLength: 1 }), (a, id1, id2) => {
        const convo = (id: string, text: string) => ({ model: "m", messages: [{ role: "user", content: "q" }, { role: "assistant", content: null, tool_calls: [{ id, type: "function", function: { name: "f", arguments: text } }] }, { role: "tool", tool_call_id: id, content: "r" }] });
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
  const BYPASSED = new Set(["thinking", "container"]);

  it("Should key every request parameter except the documented transport ones", () => {
    expect(params).toEqual(expect.arrayContaining(["model", "max_tokens", "system", "tools", "tool_choice", "stop_sequences"]));
    for (const field of params.filter((f) => !BYPASSED.has(f))) check((v) => messagesKey({ ...base, [field]: v }), ANTHROPIC_TRANSPORT.has(field));
  });

  const blocks: Array<[string, (extra: Record<string, unknown>) => unknown[], string[]]> = [
    ["TextBlockParam", (x) => [{ role: "user", content: [{ type: "text", text: "t", ...x }] }], ["type", "text"]],
    ["ToolUseBlockParam", (x) => [{ role: "user", content: "q" }, { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "f", input: {}, ...x }] }, { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "r" }] }], ["type", "id", "name"]],
    ["ToolResultBlockParam", (x) => [{ role: "user", content: "q" }, { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "f", input: {} }] }, { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "r", ...x }] }], ["type", "tool_use_id"]],
  ];
  /** The block-field ignore list: prompt-caching hints never change the answer. */
  const IGNORED_BLOCK_FIELDS = new Set(["cache_control"]);
  for (const [type, messages, fixed] of blocks) {
    it(`Should key every field of ${type} except cache_control`, () => {
      const names = fieldsOf(anthropicDts, type).filter((f) => !fixed.includes(f));
      expect(names.length).toBeGreaterThan(0);
      for (const field of names) check((v) => messagesKey({ ...base, messages: messages({ [field]: v }) }), IGNORED_BLOCK_FIELDS.has(field));
    });
  }

  it("Should give equal keys to tool_use ids renamed and input key order changed", () => {
    const convo = (id: string, input: Record<string, unknown>) => messagesKey({ ...base, messages: [{ role: "user", content: "q" }, { role: "assistant", content: [{ type: "tool_use", id, name: "f", input }] }, { role: "user", content: [{ type: "tool_result", tool_use_id: id, content: "r" }] }] });
    const a = convo("toolu_a", { x: 1, y: "2" });
    const b = convo("toolu_b", { y: "2", x: 1 });
    expect(a?.ok && b?.ok && a.key === b.key).toBe(true);
  });
});
