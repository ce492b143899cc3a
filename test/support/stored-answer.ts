import type { StoredAnswer } from "../../src/core/answer";
import type { Recording } from "../../src/core/recording";

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

/** A reader's recording as the answer a hit reads back (seen once, 1 ms); throws when the reader recorded nothing. */
export function storedOf(recording: Recording): StoredAnswer {
  if (!recording) throw new Error("not recorded");
  const a = recording.answer;
  return {
    hash: a.hash,
    message: JSON.parse(a.json) as StoredAnswer["message"],
    observations: 1,
    finishReason: a.finishReason,
    promptTokens: a.promptTokens,
    completionTokens: a.completionTokens,
    latencyMs: 1,
  };
}
