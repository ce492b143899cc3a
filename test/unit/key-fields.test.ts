import { describe, expect, it } from "vitest";
import { canonicalArguments } from "../../src/core/canonical";
import { canonicalText } from "../../src/core/canonical-text";
import { MAX_JSON_DEPTH, scanJson } from "../../src/core/exact-json";
import { keyAnswer, keyRequest } from "../../src/providers/chat/key";
import type { ChatMessage, ChatRequest } from "../../src/core/messages";

const keyOf = (body: Record<string, unknown>): string => {
  const keyed = keyRequest(body as unknown as ChatRequest, "t", "default");
  if (!keyed.ok) throw new Error(JSON.stringify(keyed));
  return keyed.key.key;
};

const withAssistant = (assistant: Record<string, unknown>) => ({
  model: "m",
  messages: [
    { role: "user", content: "hi" },
    { role: "assistant", content: "ok", ...assistant },
    { role: "user", content: "go on" },
  ],
});

describe("every message field is keyed unless it is on the ignore list", () => {
  it("Should key an assistant function_call in the history by its arguments", () => {
    const fc = (args: string) => withAssistant({ content: null, function_call: { name: "lookup", arguments: args } });
    expect(keyOf(fc('{"id":1}'))).not.toBe(keyOf(fc('{"id":2}')));
    expect(keyOf(fc('{"id":1}'))).not.toBe(keyOf(withAssistant({ content: null })));
    // Key order and spacing of function_call arguments do not matter, like tool-call arguments.
    expect(keyOf(fc('{"a":1,"b":2}'))).toBe(keyOf(fc('{ "b": 2, "a": 1 }')));
  });

  it("Should key role function messages by name and content", () => {
    const fn = (name: string, content: string) => ({
      model: "m",
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: null, function_call: { name, arguments: "{}" } },
        { role: "function", name, content },
      ],
    });
    expect(keyOf(fn("a", "1"))).not.toBe(keyOf(fn("a", "2")));
    expect(keyOf(fn("a", "1"))).not.toBe(keyOf(fn("b", "1")));
  });

  it("Should key prefix: true, reasoning_content and any unknown message field", () => {
    const plain = keyOf(withAssistant({}));
    expect(keyOf(withAssistant({ prefix: true }))).not.toBe(plain);
    expect(keyOf(withAssistant({ reasoning_content: "think" }))).not.toBe(plain);
    expect(keyOf(withAssistant({ reasoning_content: "think" }))).not.toBe(keyOf(withAssistant({ reasoning_content: "other" })));
    expect(keyOf(withAssistant({ some_new_field: { x: 1 } }))).not.toBe(plain);
    const user = (extra: Record<string, unknown>) => ({ model: "m", messages: [{ role: "user", content: "hi", ...extra }] });
    expect(keyOf(user({ weight: 0 }))).not.toBe(keyOf(user({})));
  });

  it("Should treat the documented no-ops alike: null fields, refusal: null, annotations: [], tool_calls: []", () => {
    const plain = keyOf(withAssistant({}));
    expect(keyOf(withAssistant({ refusal: null, annotations: [], audio: null, function_call: null, tool_calls: [], reasoning_content: null }))).toBe(plain);
    expect(keyOf(withAssistant({ annotations: [{ type: "url_citation", url_citation: { url: "https://a" } }] }))).not.toBe(plain);
  });

  it("Should never merge several refusal parts, or a refusal part with a refusal field", () => {
    const parts = (...refusals: string[]) => withAssistant({ content: refusals.map((refusal) => ({ type: "refusal", refusal })) });
    const one = keyRequest(parts("b") as unknown as ChatRequest, "t", "default");
    const two = keyRequest(parts("a", "b") as unknown as ChatRequest, "t", "default");
    expect(one.ok).toBe(true);
    expect(two.ok && one.ok && two.key.key === one.key.key).toBe(false);
    const both = keyRequest(withAssistant({ content: [{ type: "refusal", refusal: "a" }], refusal: "b" }) as unknown as ChatRequest, "t", "default");
    const field = keyRequest(withAssistant({ content: null, refusal: "b" }) as unknown as ChatRequest, "t", "default");
    expect(both.ok && field.ok && both.key.key === field.key.key).toBe(false);
  });
});

describe("numbers keep their exact text", () => {
  const args = (text: string) => withAssistant({ content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: text } }] });
  const answered = (text: string) => ({ ...args(text), messages: [...args(text).messages.slice(0, 2), { role: "tool", tool_call_id: "c1", content: "r" }] });

  it("Should tell apart tool-call arguments that differ past 2^53, or in how a number is written", () => {
    expect(keyOf(answered('{"user_id":12345678901234567893}'))).not.toBe(keyOf(answered('{"user_id":12345678901234567892}')));
    expect(keyOf(answered('{"x":1.0}'))).not.toBe(keyOf(answered('{"x":1}')));
    expect(keyOf(answered('{"a":1,"b":[2,3]}'))).toBe(keyOf(answered('{ "b": [2, 3], "a": 1 }')));
  });

  it("Should keep arguments with a repeated key as written", () => {
    expect(canonicalArguments('{"a":1,"a":2}')).toBe('{"a":1,"a":2}');
    expect(keyOf(answered('{"a":1,"a":2}'))).not.toBe(keyOf(answered('{"a":2}')));
  });

  it("Should write canonical text with sorted keys and numbers verbatim", () => {
    expect(canonicalText('{"b": 1.50, "a": {"d": 1e2, "c": "\\u0041"}}')).toBe('{"a":{"c":"A","d":1e2},"b":1.50}');
    expect(canonicalText("not json")).toBeNull();
    expect(canonicalText("[".repeat(MAX_JSON_DEPTH + 2) + "]".repeat(MAX_JSON_DEPTH + 2))).toBeNull();
  });

  it("Should find what JSON.parse would lose in a body", () => {
    expect(scanJson('{"seed":12345678901234567893}').lossy).toBe("inexact number");
    expect(scanJson('{"seed":123456789012345678}').lossy).toBe("inexact number");
    expect(scanJson('{"seed":9007199254740993}').lossy).toBe("inexact number");
    expect(scanJson('{"seed":9007199254740992}').lossy).toBeNull();
    expect(scanJson('{"t":1e400}').lossy).toBe("non-finite number");
    expect(scanJson('{"t":-0}').lossy).toBe("negative zero");
    expect(scanJson('{"a":1,"b":{"a":2},"c":"{\\"a\\":1,\\"a\\":2}"}').lossy).toBeNull();
    expect(scanJson('{"a":1,"a":1}').lossy).toBe("duplicate JSON key");
    expect(scanJson('{"a":1,"\\u0061":1}').lossy).toBe("duplicate JSON key");
    expect(scanJson('{"x":{"__proto__":{}}}').lossy).toBe("__proto__ key");
    expect(scanJson('{"a":1,"\\"":2}').lossy).toBe("quote in a JSON key");
    expect(scanJson('{"a":1,"x\\"y":2}').lossy).toBe("quote in a JSON key");
    expect(scanJson('{"a":1,"\\\\":2,"b":"\\""}').lossy).toBeNull();
    expect(scanJson('{"t":0.1,"u":1.0,"v":1e2,"w":-2.5E-3,"s":"1e400 \\" 99999999999999999999"}').lossy).toBeNull();
    // A producer that writes only doubles (Gemini): numbers are not checked, keys still are.
    expect(scanJson('{"seed":12345678901234567893,"t":1e400}', { numbers: false }).lossy).toBeNull();
    expect(scanJson('{"seed":1,"\\"":2}', { numbers: false }).lossy).toBe("quote in a JSON key");
    expect(scanJson('{"a":1,"a":1}', { numbers: false }).lossy).toBe("duplicate JSON key");
    expect(scanJson("[".repeat(3000) + "]".repeat(3000)).depth).toBe(3000);
  });
});

describe("answers are stored as the model sent them", () => {
  const request = { model: "m", messages: [{ role: "user", content: "hi" }] } as ChatRequest;

  it("Should store a function_call answer with its call, arguments as written", () => {
    const keyed = keyRequest(request, "t", "default");
    if (!keyed.ok) throw new Error("unkeyable");
    const answer = keyAnswer(keyed.key, { role: "assistant", content: null, function_call: { name: "lookup", arguments: '{"b":1,"a":2}' } } as ChatMessage)!;
    expect(JSON.parse(answer.json).function_call).toEqual({ name: "lookup", arguments: '{"b":1,"a":2}' });
  });

  it('Should keep content: "", refusal: null and annotations: [] in the stored answer, not in its hash', () => {
    const keyed = keyRequest(request, "t", "default");
    if (!keyed.ok) throw new Error("unkeyable");
    const calls = [{ id: "c", type: "function" as const, function: { name: "f", arguments: "{}" } }];
    const verbatim = keyAnswer(keyed.key, { role: "assistant", content: "", refusal: null, annotations: [], tool_calls: calls } as ChatMessage)!;
    const bare = keyAnswer(keyed.key, { role: "assistant", tool_calls: calls } as ChatMessage)!;
    expect(verbatim.hash).toBe(bare.hash);
    expect(JSON.parse(verbatim.json)).toMatchObject({ content: "", refusal: null, annotations: [] });
    expect(JSON.parse(bare.json)).not.toHaveProperty("refusal");
  });
});
