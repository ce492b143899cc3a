import type { AnthropicKey } from "./key";
import { messageFieldsOf, setsUnrecordable } from "./envelope";
import { AnthropicSseAssembler, messageNumberServed } from "./sse-assembler";
import { memberTexts, respelledIn, scanJson } from "../../core/exact-json";
import type { AnswerReader } from "../../core/recording";
import { recordingOfMessage, type MessagesUsage } from "./record";

interface UpstreamMessage {
  type?: unknown;
  error?: unknown;
  role?: string;
  content?: unknown;
  stop_reason?: string | null;
  stop_sequence?: string | null;
  usage?: MessagesUsage | null;
}

/**
 * The tool inputs of a JSON answer as the body wrote them (`text`): key order, integer-like keys included,
 * and number spellings (`1.0`, `2.50`, `1e3`), which serialising the parsed input would lose (before 11-28
 * a hit served `{"qty":1}` for `{"qty":1.0}`). The streamed path keeps the `partial_json` text.
 */
function inputTextsOf(content: unknown, text: string): Array<string | undefined> {
  if (!Array.isArray(content)) return [];
  const written = memberTexts(text, "content", "input");
  return content.flatMap((b, i) => ((b as { type?: unknown })?.type === "tool_use" ? [written[i]] : []));
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
      // Only a plain `message` whose numbers and keys JSON.parse kept exactly is recorded.
      if (
        typeof json !== "object" ||
        json === null ||
        (json.error !== undefined && json.error !== null) ||
        (json.type !== undefined && json.type !== "message")
      )
        return null;
      if (scanJson(text).lossy !== null) return null;
      // A number written otherwise than JSON.stringify would (`1.0`) in a field stored as parsed (tool inputs are kept as their text).
      if (respelledIn(text, "content", (tokens, block) => (block ? tokens[0] !== "input" : messageNumberServed(tokens)))) return null;
      // A container or context edits upstream: the answer is relayed, not recorded. Its other fields are kept.
      if (setsUnrecordable(json)) return null;
      const message = { role: json.role, content: json.content };
      const envelope = { message: messageFieldsOf(json as Record<string, unknown>) };
      return recordingOfMessage(
        key,
        message,
        { reason: json.stop_reason, sequence: json.stop_sequence },
        json.usage,
        rawLength,
        latencyMs,
        inputTextsOf(json.content, text),
        envelope,
      );
    },
    stream() {
      const assembler = new AnthropicSseAssembler();
      return {
        feed: (bytes) => assembler.feed(bytes),
        finish: (latencyMs) => {
          const result = assembler.result();
          if (!result) return null;
          return recordingOfMessage(
            key,
            result.message,
            { reason: result.stopReason, sequence: result.stopSequence },
            result.usage,
            rawLength,
            latencyMs,
            result.inputTexts,
            result.envelope,
          );
        },
      };
    },
  };
}
