import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalArguments, canonicalConversation } from "../../src/core/canonical";
import { walk } from "../../src/core/hash";
import type { ChatMessage } from "../../src/core/messages";

const hashOf = (messages: ChatMessage[]) => {
  const result = canonicalConversation(messages);
  if (!result.ok) throw new Error(JSON.stringify(result.error));
  return walk("root", result.messages).at(-1)!.hash;
};

const call = (id: string, args: string) => ({ id, type: "function" as const, function: { name: "get_order", arguments: args } });

describe("canonical form", () => {
  it("Should key what SDKs echo back (refusal: null, annotations: [], parts) like the plain message", () => {
    const plain: ChatMessage[] = [
      { role: "user", content: "hi" },
      { role: "assistant", content: "hello" },
    ];
    const echoed = [
      { role: "user", content: [{ type: "text", text: "hi" }] },
      { role: "assistant", content: "hello", refusal: null, annotations: [], audio: null },
    ] as ChatMessage[];
    expect(hashOf(echoed)).toBe(hashOf(plain));
  });

  it("Should treat null, empty and missing assistant content alike when there are tool calls", () => {
    const base = (content: string | null | undefined) =>
      [
        { role: "user", content: "x" },
        { role: "assistant", content, tool_calls: [call("a", "{}")] },
      ] as ChatMessage[];
    expect(hashOf(base(null))).toBe(hashOf(base(undefined)));
    expect(hashOf(base(""))).toBe(hashOf(base(null)));
  });

  it("Should replace tool-call ids with ordinals, so fresh ids key the same node", () => {
    const convo = (a: string, b: string) =>
      [
        { role: "user", content: "x" },
        { role: "assistant", content: null, tool_calls: [call(a, '{"order_id":"A-1"}'), call(b, "{}")] },
        { role: "tool", tool_call_id: a, content: "r1" },
        { role: "tool", tool_call_id: b, content: "r2" },
      ] as ChatMessage[];
    expect(hashOf(convo("call_abc", "call_def"))).toBe(hashOf(convo("call_zzz", "call_yyy")));
    const result = canonicalConversation(convo("x1", "x2"));
    expect(result.ok && result.messages[3].tool_call_id).toBe("call_1");
  });

  it("Should distinguish which call a tool result answers", () => {
    const convo = (answered: string) =>
      [
        { role: "user", content: "x" },
        { role: "assistant", content: null, tool_calls: [call("a", "{}"), call("b", "{}")] },
        { role: "tool", tool_call_id: answered, content: "r" },
      ] as ChatMessage[];
    expect(hashOf(convo("a"))).not.toBe(hashOf(convo("b")));
  });

  it("Should reject a tool result that answers no earlier call", () => {
    const result = canonicalConversation([{ role: "tool", tool_call_id: "nope", content: "r" }] as ChatMessage[]);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error.kind).toBe("invalid");
  });

  it("Should mark image parts uncacheable", () => {
    const result = canonicalConversation([{ role: "user", content: [{ type: "image_url", image_url: { url: "data:" } }] }] as ChatMessage[]);
    expect(!result.ok && result.error).toEqual({ kind: "uncacheable", reason: "non-text content part" });
  });

  it("Should keep arguments that are not JSON as they were sent", () => {
    expect(canonicalArguments("{not json")).toBe("{not json");
    expect(canonicalArguments('{"b":1,"a":[2,{"d":1,"c":0}]}')).toBe('{"a":[2,{"c":0,"d":1}],"b":1}');
  });
});

/** Arbitrary JSON objects, for tool-call arguments. */
const jsonObject = fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 });

function shuffleKeys(value: unknown, seed: number): unknown {
  if (Array.isArray(value)) return value.map((v) => shuffleKeys(v, seed + 1));
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>);
    entries.sort(
      (a, b) => ((a[0].length * 31 + seed) % 7) - ((b[0].length * 31 + seed) % 7) || (seed % 2 ? a[0].localeCompare(b[0]) : b[0].localeCompare(a[0])),
    );
    return Object.fromEntries(entries.map(([k, v]) => [k, shuffleKeys(v, seed + 3)]));
  }
  return value;
}

describe("hashing properties", () => {
  it("Should hash equivalent messages alike: argument key order, whitespace and ids never matter", () => {
    fc.assert(
      fc.property(jsonObject, fc.string(), fc.string({ minLength: 1 }), fc.string({ minLength: 1 }), fc.nat(), (args, text, id1, id2, seed) => {
        const convo = (argsJson: string, id: string) =>
          [
            { role: "user", content: text },
            { role: "assistant", content: null, tool_calls: [call(id, argsJson)] },
            { role: "tool", tool_call_id: id, content: "ok" },
          ] as ChatMessage[];
        const a = convo(JSON.stringify(args), id1);
        const b = convo(JSON.stringify(shuffleKeys(args, seed), null, seed % 3), id2);
        expect(hashOf(a)).toBe(hashOf(b));
      }),
    );
  });

  it("Should hash different messages differently", () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.constantFrom("user", "system", "developer"), (x, y, role) => {
        fc.pre(x !== y && x !== "" && y !== "");
        const a = [{ role, content: x }] as ChatMessage[];
        const b = [{ role, content: y }] as ChatMessage[];
        expect(hashOf(a)).not.toBe(hashOf(b));
      }),
    );
  });

  it("Should hash different arguments differently", () => {
    fc.assert(
      fc.property(jsonObject, jsonObject, (x, y) => {
        fc.pre(JSON.stringify(shuffleKeys(x, 0)) !== JSON.stringify(shuffleKeys(y, 0)));
        const convo = (args: unknown) =>
          [
            { role: "user", content: "q" },
            { role: "assistant", content: null, tool_calls: [call("i", JSON.stringify(args))] },
          ] as ChatMessage[];
        expect(hashOf(convo(x))).not.toBe(hashOf(convo(y)));
      }),
    );
  });

  it("Should make every prefix a node of the longer path (h_i depends only on m_1..m_i)", () => {
    fc.assert(
      fc.property(fc.array(fc.string(), { minLength: 2, maxLength: 8 }), (texts) => {
        const messages = texts.map((t, i) => ({ role: i % 2 ? "assistant" : "user", content: t || "." })) as ChatMessage[];
        const full = canonicalConversation(messages);
        const prefix = canonicalConversation(messages.slice(0, -1));
        if (!full.ok || !prefix.ok) throw new Error("not canonical");
        expect(
          walk("r", full.messages)
            .slice(0, -1)
            .map((s) => s.hash),
        ).toEqual(walk("r", prefix.messages).map((s) => s.hash));
      }),
    );
  });
});

describe("stored form", () => {
  it("Should keep the model's argument text while hashing the canonical form", async () => {
    const { keyRequest, keyAnswer } = await import("../../src/providers/chat/key");
    const keyed = keyRequest({ model: "m", messages: [{ role: "user", content: "x" }] }, "t", "default");
    if (!keyed.ok) throw new Error("not keyed");
    const a = keyAnswer(keyed.key, { role: "assistant", content: null, tool_calls: [call("c1", '{"b":1, "a":2}')] });
    const again = keyRequest({ model: "m", messages: [{ role: "user", content: "x" }] }, "t", "default");
    if (!again.ok) throw new Error("not keyed");
    const b = keyAnswer(again.key, { role: "assistant", content: null, tool_calls: [call("c2", '{"a":2,"b":1}')] });
    expect(a?.hash).toBe(b?.hash);
    expect(a?.message.tool_calls?.[0].function.arguments).toBe('{"b":1, "a":2}');
    expect(a?.json).toContain('{\\"b\\":1, \\"a\\":2}');
  });
});
