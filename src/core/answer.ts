import type { CanonicalMessage } from "./messages";

/** A recorded answer as it is served: the node, its message and what producing it cost. */
export interface StoredAnswer {
  hash: string;
  message: CanonicalMessage;
  observations: number;
  finishReason: string;
  promptTokens: number;
  completionTokens: number;
  latencyMs: number;
}

/** Finish reasons that mark a complete, replayable generation. */
export const RECORDABLE_FINISH = new Set(["stop", "tool_calls", "length", "function_call"]);
