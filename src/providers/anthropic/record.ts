import { storedAnswerJson } from "../../core/stored-json";
import { envelopeKeysOf, type AnthropicEnvelope } from "./envelope";
import { keyAnthropicAnswer, type AnthropicKey } from "./key";
import { anthropicMessage } from "./schema";
import { cutInToolCall, encodeStop } from "./stop";
import { recordInputOf } from "../../core/recording";
import type { Recording } from "../../core/recording";

/** Upstream usage as the Messages API reports it. */
export interface MessagesUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
}

/**
 * Builds the record of a Messages generation, or null when the answer is
 * incomplete (`pause_turn`, `refusal`, no stop reason, a tool call cut by
 * `max_tokens`) or not cacheable.
 * `inputTexts` are the tool inputs as the model wrote them (see keyAnthropicAnswer); `envelope`, what the
 * message carried around its content, is stored beside it, outside the hash (src/providers/anthropic/envelope.ts).
 */
export function recordingOfMessage(
  key: AnthropicKey,
  message: unknown,
  stop: { reason: string | null | undefined; sequence: string | null | undefined },
  usage: MessagesUsage | null | undefined,
  rawLength: number,
  latencyMs: number,
  inputTexts: ReadonlyArray<string | undefined> = [],
  envelope: AnthropicEnvelope = { message: {} },
): Recording {
  const finishReason = encodeStop(stop.reason, stop.sequence);
  if (!finishReason) return null;
  const parsed = anthropicMessage.safeParse(message);
  if (!parsed.success || parsed.data.role !== "assistant") return null;
  if (cutInToolCall(stop.reason, parsed.data.content)) return null;
  const answer = keyAnthropicAnswer(key, parsed.data, inputTexts);
  if (!answer) return null;
  const path = key.path.map((s) => ({ hash: s.hash, parent: s.parent, role: s.role, json: s.json }));
  const around = envelopeKeysOf(envelope);
  const stored = Object.keys(around).length > 0 ? { hash: answer.hash, json: storedAnswerJson({ ...answer.message, ...around }) } : answer;
  return recordInputOf({ ...key, path }, stored, finishReason, { prompt: usage?.input_tokens, completion: usage?.output_tokens }, rawLength, latencyMs);
}
