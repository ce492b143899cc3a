import type { StoredAnswer } from "../../src/core/answer";

/** A stored answer named `hash` whose message is its own hash: what the single-flight and refresh tests hand around. */
export const storedAnswer = (hash: string): StoredAnswer => ({
  hash,
  message: { role: "assistant", content: hash },
  observations: 1,
  finishReason: "stop",
  promptTokens: 1,
  completionTokens: 1,
  latencyMs: 1,
});
