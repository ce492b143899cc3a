/// <reference types="vite/client" />
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { check, checkParams, fieldsOf, messagesKey, MIN_PAIRS_PER_FIELD, pair, pairOf, UNKEYED_MESSAGES } from "./key-oracle.support";
import anthropicDts from "../../node_modules/@anthropic-ai/sdk/resources/messages/messages.d.ts?raw";

/** The differential key oracle (key-oracle.support.ts) on Anthropic Messages. */

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
    checkParams(params, BYPASSING, TYPED_PARAMS, UNKEYED_MESSAGES, (field, v) => messagesKey({ ...base, [field]: v }));
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
