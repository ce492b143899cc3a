import type { AnthropicKey } from "../../cache/anthropic/key";
import { AnthropicSseAssembler } from "../../cache/anthropic/sse-assembler";
import type { AnswerReader } from "../generation";
import { recordingOfMessage, type MessagesUsage } from "./record";

interface UpstreamMessage {
  role?: string;
  content?: unknown;
  stop_reason?: string | null;
  stop_sequence?: string | null;
  usage?: MessagesUsage | null;
}

/**
 * Reads Messages answers (a message or its event stream) into recordings;
 * `pause_turn`, refusals, cut streams and errors read as null.
 */
export function messagesAnswerReader(key: AnthropicKey, rawLength: number): AnswerReader {
  return {
    fromJson(text, latencyMs) {
      let json: UpstreamMessage;
      try {
        json = JSON.parse(text) as UpstreamMessage;
      } catch {
        return null;
      }
      const message = { role: json.role, content: json.content };
      return recordingOfMessage(key, message, { reason: json.stop_reason, sequence: json.stop_sequence }, json.usage, rawLength, latencyMs);
    },
    stream() {
      const assembler = new AnthropicSseAssembler();
      return {
        feed: (bytes) => assembler.feed(bytes),
        finish: (latencyMs) => {
          const result = assembler.result();
          if (!result) return null;
          return recordingOfMessage(key, result.message, { reason: result.stopReason, sequence: result.stopSequence }, result.usage, rawLength, latencyMs);
        },
      };
    },
  };
}
