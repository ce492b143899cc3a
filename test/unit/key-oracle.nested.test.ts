/// <reference types="vite/client" />
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { pair } from "./key-oracle.support";
import anthropicDts from "../../node_modules/@anthropic-ai/sdk/resources/messages/messages.d.ts?raw";
import responsesDts from "../../node_modules/openai/resources/responses/responses.d.ts?raw";
import { keyMessagesRequest } from "../../src/providers/anthropic/key";
import { messagesRequest } from "../../src/providers/anthropic/schema";
import { keyResponsesRequest } from "../../src/providers/responses/key";
import { responsesRequest } from "../../src/providers/responses/schema";

/**
 * The differential key oracle one level down: the fields of the
 * SDKs' nested request types (an Anthropic tool, each tool_choice, every
 * content block type; each Responses input item type) read from their type
 * definitions, so a type or field a new SDK adds is tested the day it is installed.
 */

/** The top-level members of `interface <name>` (exported or inside a namespace) and its `type` literal. */
function shapeOf(dts: string, name: string): { fields: string[]; type: string | null } {
  const [outer, inner] = name.includes(".") ? name.split(".") : [null, name];
  const from = outer ? dts.search(new RegExp(`export declare namespace ${outer} \\{`)) : 0;
  const start = dts.slice(from).search(new RegExp(`(export )?interface ${inner}\\b[^{]*\\{`));
  if (from < 0 || start < 0) throw new Error(`interface ${name} not found`);
  const fields: string[] = [];
  let type: string | null = null;
  let depth = 0;
  for (const line of dts.slice(from + start).split("\n")) {
    const m = depth === 1 ? /^\s*(\w+)\??:\s*(?:'([^']*)';)?/.exec(line) : null;
    if (m) fields.push(m[1]);
    if (m?.[1] === "type" && m[2] !== undefined) type = m[2];
    depth += (line.match(/\{/g) ?? []).length - (line.match(/\}/g) ?? []).length;
    if (depth === 0 && fields.length > 0) break;
  }
  return { fields, type };
}

/** The member names of `export type <name> = A | B | …`. */
function unionOf(dts: string, name: string): string[] {
  const m = new RegExp(`export type ${name} = ([^;]+);`).exec(dts);
  if (!m) throw new Error(`type ${name} not found`);
  return m[1].split("|").map((s) => s.trim());
}

type Keyed = { ok: true; key: string } | { ok: false; reason: string } | null;

function messagesKey(body: Record<string, unknown>): Keyed {
  const parsed = messagesRequest.safeParse({ model: "c", max_tokens: 16, ...body });
  if (!parsed.success) return null;
  const keyed = keyMessagesRequest(parsed.data, new Headers(), "t", "default");
  return keyed.ok ? { ok: true, key: keyed.key.key } : { ok: false, reason: "bypass" in keyed ? keyed.bypass : "invalid" };
}

function responsesKey(input: unknown): Keyed {
  const parsed = responsesRequest.safeParse({ model: "m", input });
  if (!parsed.success) return null;
  const keyed = keyResponsesRequest(parsed.data);
  return keyed.ok ? { ok: true, key: keyed.key.key } : { ok: false, reason: "bypass" in keyed ? keyed.bypass : "invalid" };
}

/**
 * Each field must have been compared on at least this many pairs (of 20 runs) where both requests were keyed
 * (before this floor, Tool.name, EasyInputMessage.content, a function call's name and arguments and a function
 * call output's output compared none or one or two: typed values for them now).
 */
const MIN_PAIRS_PER_FIELD = 15;
/** Values the schemas accept for the fields they type (any other value is a 400, so would compare nothing). */
const TYPED: Record<string, fc.Arbitrary<unknown>> = {
  "Tool.name": fc.string({ minLength: 1 }),
  "EasyInputMessage.content": fc.string({ minLength: 1 }),
  "ResponseFunctionToolCall.name": fc.string({ minLength: 1 }),
  "ResponseFunctionToolCall.arguments": fc.integer().map((n) => JSON.stringify({ n })),
  "ResponseInputItem.FunctionCallOutput.output": fc.string({ minLength: 1 }),
};
/** `type` names what the object is (a custom tool, a message, a call): another value makes another object, which the tests of each type check. */
const NAMES_ITS_KIND = new Set(["Tool.type", "EasyInputMessage.type", "ResponseFunctionToolCall.type", "ResponseInputItem.FunctionCallOutput.type"]);

/**
 * Two requests differing in one field alone: different keys, equal ones when `ignored`; a rejected or bypassed
 * one is never served. Fails when fewer than MIN_PAIRS_PER_FIELD pairs were both keyed (but for a `type`).
 */
function differential(keyOf: (v: unknown) => Keyed, ignored: boolean, label: string): void {
  const values = TYPED[label];
  const pairs = values ? fc.tuple(values, values).filter(([a, b]) => JSON.stringify(a) !== JSON.stringify(b)) : pair;
  let compared = 0;
  fc.assert(
    fc.property(pairs, ([a, b]) => {
      const ka = keyOf(a);
      const kb = keyOf(b);
      if (!ka?.ok || !kb?.ok) return;
      compared++;
      if (ignored) expect(ka.key, label).toBe(kb.key);
      else expect(ka.key, label).not.toBe(kb.key);
    }),
    { numRuns: 20 },
  );
  if (!NAMES_ITS_KIND.has(label)) expect(compared, `${label}: pairs compared`).toBeGreaterThanOrEqual(MIN_PAIRS_PER_FIELD);
}

const hi = [{ role: "user", content: "hi" }];

describe("differential key oracle: Anthropic nested request types", () => {
  it("Should key every field of a Tool but cache_control", () => {
    const { fields } = shapeOf(anthropicDts, "Tool");
    expect(fields).toEqual(expect.arrayContaining(["name", "input_schema", "description", "cache_control", "strict"]));
    for (const field of fields)
      differential(
        (v) => messagesKey({ messages: hi, tools: [{ name: "f", input_schema: { type: "object" }, [field]: v }] }),
        field === "cache_control",
        `Tool.${field}`,
      );
  });

  it("Should key every field of every tool_choice", () => {
    for (const name of unionOf(anthropicDts, "ToolChoice")) {
      const { fields, type } = shapeOf(anthropicDts, name);
      for (const field of fields.filter((f) => f !== "type"))
        differential((v) => messagesKey({ messages: hi, tool_choice: { type, name: "f", [field]: v } }), false, `${name}.${field}`);
    }
  });

  it("Should bypass every content block type but text, tool_use, tool_result and thinking (keyed with its signature)", () => {
    const keyed = new Set(["text", "tool_use", "tool_result", "thinking", "redacted_thinking"]);
    expect(messagesKey({ messages: [{ role: "user", content: [{ type: "thinking", source: {} }] }] })).toEqual({
      ok: false,
      reason: "thinking block without its text and signature",
    });
    const signed = (signature: string) =>
      messagesKey({
        messages: [
          { role: "user", content: "hi" },
          { role: "assistant", content: [{ type: "thinking", thinking: "t", signature }] },
          { role: "user", content: "go" },
        ],
      });
    expect(signed("a")).not.toEqual(signed("b"));
    let checked = 0;
    for (const name of unionOf(anthropicDts, "ContentBlockParam")) {
      const { type } = shapeOf(anthropicDts, name);
      if (!type || keyed.has(type)) continue;
      checked++;
      const outcome = messagesKey({ messages: [{ role: "user", content: [{ type, source: { type: "url", url: "https://x" } }] }] });
      expect(outcome, name).toEqual({ ok: false, reason: `${type} content block` });
    }
    expect(checked).toBeGreaterThanOrEqual(10);
  });
});

describe("differential key oracle: Responses input items", () => {
  const call = { type: "function_call", call_id: "c1", name: "f", arguments: "{}" };

  it("Should bypass every input item type but messages, reasoning items, function calls and their outputs", () => {
    const keyed = new Set(["message", "reasoning", "function_call", "function_call_output"]);
    let checked = 0;
    for (const name of unionOf(responsesDts, "ResponseInputItem")) {
      const { type } = shapeOf(responsesDts, name);
      if (!type || keyed.has(type)) continue;
      checked++;
      const outcome = responsesKey([
        { role: "user", content: "q" },
        { type, id: "x_1", call_id: "c1" },
      ]);
      expect(outcome?.ok, name).toBe(false);
    }
    expect(checked).toBeGreaterThanOrEqual(20);
  });

  it("Should key every field of a user message, a function call and a function call output, but their ids and statuses", () => {
    const noise = new Set(["id", "status", "type"]);
    const cases: Array<[string, (field: string, v: unknown) => unknown[]]> = [
      ["EasyInputMessage", (field, v) => [{ role: "user", content: "q", [field]: v }]],
      [
        "ResponseFunctionToolCall",
        (field, v) => [
          { role: "user", content: "q" },
          { ...call, [field]: v },
          { type: "function_call_output", call_id: "c1", output: "r" },
        ],
      ],
      [
        "ResponseInputItem.FunctionCallOutput",
        (field, v) => [{ role: "user", content: "q" }, call, { type: "function_call_output", call_id: "c1", output: "r", [field]: v }],
      ],
    ];
    for (const [name, input] of cases) {
      const { fields } = shapeOf(responsesDts, name);
      expect(fields.length, name).toBeGreaterThan(2);
      for (const field of fields.filter((f) => f !== "role" && f !== "call_id"))
        differential((v) => responsesKey(input(field, v)), noise.has(field), `${name}.${field}`);
    }
  });

  it("Should key every field of a reasoning item sent back, its id too, but its status", () => {
    const { fields } = shapeOf(responsesDts, "ResponseReasoningItem");
    expect(fields).toEqual(expect.arrayContaining(["id", "summary", "encrypted_content", "status"]));
    const input = (field: string, v: unknown) => [
      { role: "user", content: "q" },
      { type: "reasoning", id: "rs_1", summary: [], [field]: v },
      call,
      { type: "function_call_output", call_id: "c1", output: "r" },
    ];
    for (const field of fields.filter((f) => f !== "type"))
      differential((v) => responsesKey(input(field, v)), field === "status", `ResponseReasoningItem.${field}`);
  });
});
