import { keyAnthropicAnswer, type AnthropicKey } from "../../cache/anthropic/key";
import { anthropicMessage } from "../../cache/anthropic/schema";
import { encodeStop } from "../../cache/anthropic/stop";
import type { RecordInput } from "../../store/record";

/** What the model produced, ready to record; null when it must not be recorded. */
export type Recording = RecordInput | null;

/** Upstream usage as the Messages API reports it. */
export interface MessagesUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
}

/**
 * Builds the record of a Messages generation, or null when the answer is
 * incomplete (`pause_turn`, `refusal`, no stop reason) or not cacheable.
 */
export function recordingOfMessage(
  key: AnthropicKey,
  message: unknown,
  stop: { reason: string | null | undefined; sequence: string | null | undefined },
  usage: MessagesUsage | null | undefined,
  rawLength: number,
  latencyMs: number,
): Recording {
  const finishReason = encodeStop(stop.reason, stop.sequence);
  if (!finishReason) return null;
  const parsed = anthropicMessage.safeParse(message);
  if (!parsed.success || parsed.data.role !== "assistant") return null;
  const answer = keyAnthropicAnswer(key, parsed.data);
  if (!answer) return null;
  return {
    treeId: key.treeId,
    tenant: key.tenant,
    namespace: key.namespace,
    model: key.model,
    frameJson: key.frameJson,
    path: key.path.map((s) => ({ hash: s.hash, parent: s.parent, role: s.role, json: s.json })),
    answer: {
      hash: answer.hash,
      parent: key.key,
      role: "assistant",
      json: answer.json,
      finishReason,
      // Without upstream usage, estimate at 4 characters a token.
      promptTokens: usage?.input_tokens ?? Math.ceil(rawLength / 4),
      completionTokens: usage?.output_tokens ?? Math.ceil(answer.json.length / 4),
      latencyMs,
    },
  };
}
