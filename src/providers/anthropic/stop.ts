/** Stop reasons that mark a complete, replayable Messages generation. */
const RECORDABLE = new Set(["end_turn", "tool_use", "max_tokens", "stop_sequence"]);

const SEQUENCE_PREFIX = "stop_sequence:";

/**
 * The finish reason stored for an Anthropic answer: its `stop_reason`, and for
 * `stop_sequence` also the sequence that matched (`stop_sequence:<seq>`), so a
 * hit can report it. Null when the generation must not be recorded
 * (`pause_turn`, `refusal`, a missing reason, …).
 */
export function encodeStop(stopReason: string | null | undefined, stopSequence: string | null | undefined): string | null {
  if (!stopReason || !RECORDABLE.has(stopReason)) return null;
  return stopReason === "stop_sequence" && stopSequence ? `${SEQUENCE_PREFIX}${stopSequence}` : stopReason;
}

/** The `stop_reason` and `stop_sequence` of a stored finish reason. */
export function decodeStop(finishReason: string): { stop_reason: string; stop_sequence: string | null } {
  if (finishReason.startsWith(SEQUENCE_PREFIX)) return { stop_reason: "stop_sequence", stop_sequence: finishReason.slice(SEQUENCE_PREFIX.length) };
  return { stop_reason: finishReason, stop_sequence: null };
}

/**
 * Whether `max_tokens` stopped the answer inside a tool call (its last block): the API sends the call it had
 * begun, its input partial or `{}` (streamed, its `partial_json` cut anywhere, even where it parses), so a hit
 * would hand the agent a call the model never finished. Such an answer is never recorded; a text cut by
 * `max_tokens` is (the limit is in the frame).
 */
export function cutInToolCall(stopReason: string | null | undefined, content: string | ReadonlyArray<{ type: string }>): boolean {
  return stopReason === "max_tokens" && typeof content !== "string" && CUT_BLOCKS.has(content.at(-1)?.type ?? "");
}

/** Blocks `max_tokens` may cut unfinished: a tool call, and thinking (its signature comes at its end). */
const CUT_BLOCKS: ReadonlySet<string> = new Set(["tool_use", "thinking", "redacted_thinking"]);
