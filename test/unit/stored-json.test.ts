import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/core/canonical";
import { storedAnswerJson } from "../../src/core/stored-json";

describe("storedAnswerJson", () => {
  it("Should write the message canonically and each muscle-mem: value in its own key order", () => {
    const stored = {
      role: "assistant",
      content: { z: 1, a: [{ y: 2, b: 1.5 }] },
      "muscle-mem:response": { zeta: 1, alpha: { y: "1", b: [{ q: 1, c: 2 }] } },
      "muscle-mem:choice": { z: null, a: 2 },
      skipped: undefined,
    };
    expect(storedAnswerJson(stored)).toBe(
      '{"content":{"a":[{"b":1.5,"y":2}],"z":1},"muscle-mem:choice":{"z":null,"a":2},"muscle-mem:response":{"zeta":1,"alpha":{"y":"1","b":[{"q":1,"c":2}]}},"role":"assistant"}',
    );
    // The same value as stored before, only the envelope's order differs.
    expect(canonicalJson(JSON.parse(storedAnswerJson(stored)))).toBe(canonicalJson(stored));
  });

  it("Should be canonical JSON for an answer without envelope keys", () => {
    const stored = { role: "assistant", content: 'x\u2028"', tool_calls: [{ b: 1, a: 1e-7 }] };
    expect(storedAnswerJson(stored)).toBe(canonicalJson(stored));
  });
});
