import { describe, expect, it } from "vitest";
import { keyGeminiAnswer, keyGeminiRequest, type GeminiKey } from "../../src/providers/gemini/key";
import type { GenerateContentRequest } from "../../src/providers/gemini/schema";

/** A thought part (`thought: true`) is keyed like any part: its text, its flag and its signature. */

const scope = { tenant: "t", namespace: "default", maxMessageBytes: 900_000 };
const user = (text: string) => ({ role: "user", parts: [{ text }] });
const thought = { text: "Weighing the refund.", thought: true, thoughtSignature: "c2ln" };

function keyOf(contents: unknown[]): GeminiKey {
  const out = keyGeminiRequest({ contents, generationConfig: { thinkingConfig: { includeThoughts: true } } } as GenerateContentRequest, "gemini-x", scope);
  if (!out.ok) throw new Error(JSON.stringify(out));
  return out.key;
}

describe("Gemini thought parts", () => {
  it("Should key a thought part sent back: another text, flag or signature is another request", () => {
    const turn = (part: Record<string, unknown>) => [user("Refund A-1."), { role: "model", parts: [part, { text: "Done." }] }, user("Thanks.")];
    const key = keyOf(turn(thought)).key;
    expect(keyOf(turn({ ...thought })).key).toBe(key);
    for (const other of [
      { ...thought, text: "Weighing a return." },
      { text: thought.text, thoughtSignature: "c2ln" },
      { ...thought, thought: false },
      { ...thought, thoughtSignature: "b3RoZXI=" },
      { text: thought.text, thought: true },
    ]) {
      expect(keyOf(turn(other)).key).not.toBe(key);
    }
    // An empty thought that carries a signature is kept, not dropped as an empty text part.
    expect(keyOf(turn({ text: "", thought: true, thoughtSignature: "c2ln" })).key).not.toBe(
      keyOf([user("Refund A-1."), { role: "model", parts: [{ text: "Done." }] }, user("Thanks.")]).key,
    );
  });

  it("Should record an answer with thought parts as the model sent them, and its node hash as the echo keys it", () => {
    const key = keyOf([user("Refund A-1.")]);
    const parts = [thought, { text: "", thought: true }, { text: "Done.", thoughtSignature: "c2ln" }];
    const answer = keyGeminiAnswer(key, { role: "model", parts });
    expect(answer?.node.parts).toEqual(parts);
    expect(answer?.hash).toBe(keyOf([user("Refund A-1."), { role: "model", parts }]).key);
  });
});
