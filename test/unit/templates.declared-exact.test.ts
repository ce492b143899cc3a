import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/core/canonical";
import type { CanonicalMessage } from "../../src/core/messages";
import { substituteMessage } from "../../src/cache/templates/placeholders";

const call = (userId: string): CanonicalMessage => ({
  role: "assistant",
  tool_calls: [{ id: "call_0", type: "function", function: { name: "refund", arguments: `{"name":"Ada","user_id":${userId}}` } }],
});

describe("declared keys keep numbers exact", () => {
  it("Should key tool-call arguments that differ only past 2^53 apart, and still put placeholders in their text", () => {
    const a = substituteMessage(call("12345678901234567893"), { name: "Ada" });
    const b = substituteMessage(call("12345678901234567892"), { name: "Ada" });
    expect(canonicalJson(a)).not.toBe(canonicalJson(b));
    expect(a.tool_calls?.[0].function.arguments).toBe('{"name":"{{name}}","user_id":12345678901234567893}');
  });
});
