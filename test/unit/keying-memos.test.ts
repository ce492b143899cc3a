import { describe, expect, it } from "vitest";
import { canonicalJsonMemo } from "../../src/core/canonical";
import { digest, treeIdOf, walk } from "../../src/core/hash";
import { canonicalJson } from "../../src/core/canonical";
import { hasLoneSurrogate } from "../../src/core/unicode";

/**
 * The isolate memos and shortcuts on the keying path give exactly what the plain computation gives:
 * tree ids (memoised per frame, tenant and namespace), path steps (memoised per parent and message),
 * and the lone-surrogate check (a plain surrogate test before the lookaround one).
 */

describe("treeIdOf", () => {
  it("is the digest of tenant, namespace and frame, memoised or not, for many tenants of one frame", () => {
    const frame = canonicalJsonMemo({ model: "gpt-x", tools: [{ type: "function", function: { name: "f" } }] });
    const plain = (tenant: string, namespace: string) => digest(`tree\u0000${tenant}\u0000${namespace}\u0000${frame}`);
    // 200 tenants twice: past the per-frame bound of scopes, and again from the memo.
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 200; i++) expect(treeIdOf(`tenant-${i}`, "default", frame)).toBe(plain(`tenant-${i}`, "default"));
    }
    expect(treeIdOf("a", "b", frame)).not.toBe(treeIdOf("a", "c", frame));
    expect(treeIdOf("a", "b", `${frame} `)).toBe(digest(`tree\u0000a\u0000b\u0000${frame} `));
  });
});

describe("walk", () => {
  it("hashes each step as H(parent, canonical JSON), whether the step is memoised or not", () => {
    const messages = [
      { role: "system", content: "be brief" },
      { role: "user", content: "hi" },
    ];
    for (let round = 0; round < 2; round++) {
      const steps = walk("root", messages);
      expect(steps.map((s) => s.hash)).toEqual([
        digest(`root\u0000${canonicalJson(messages[0])}`),
        digest(`${digest(`root\u0000${canonicalJson(messages[0])}`)}\u0000${canonicalJson(messages[1])}`),
      ]);
      // The same message under another parent is another step.
      expect(walk("other", messages.slice(1))[0].hash).toBe(digest(`other\u0000${canonicalJson(messages[1])}`));
    }
  });
});

describe("walk's stored forms", () => {
  it("keep the canonical JSON of the stored form (arguments as sent) when it is not the hash form, memoised or not", () => {
    const call = (args: string) => ({ id: "call_0", type: "function" as const, function: { name: "f", arguments: args } });
    const hashed = [{ role: "assistant", tool_calls: [call('{"a":1}')] }];
    const stored = [{ role: "assistant", tool_calls: [call('{"a": 1}')] }];
    for (let round = 0; round < 2; round++) {
      const [step] = walk("root", hashed, stored);
      expect(step.json).toBe(canonicalJson(stored[0]));
      expect(step.json).toContain('"arguments":"{\\"a\\": 1}"');
      expect(step.hash).toBe(digest(`root\u0000${canonicalJson(hashed[0])}`));
      expect(step.message).toBe(stored[0]);
    }
  });
});

describe("hasLoneSurrogate", () => {
  it("finds a lone high or low surrogate in values and keys, and passes pairs and plain text", () => {
    expect(hasLoneSurrogate("plain text")).toBe(false);
    expect(hasLoneSurrogate("pair \uD83D\uDE00 ok")).toBe(false);
    expect(hasLoneSurrogate("high \uD83D alone")).toBe(true);
    expect(hasLoneSurrogate("low \uDE00 alone")).toBe(true);
    expect(hasLoneSurrogate("\uDE00\uD83D")).toBe(true);
    expect(hasLoneSurrogate({ a: [1, null, { b: "x\uD800" }] })).toBe(true);
    expect(hasLoneSurrogate({ ["k\uDC00"]: "v" })).toBe(true);
    expect(hasLoneSurrogate({ a: ["\uD83D\uDE00"], b: 2 })).toBe(false);
  });
});
