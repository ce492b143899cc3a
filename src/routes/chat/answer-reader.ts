import { RECORDABLE_FINISH } from "../../cache/answer";
import { envelopeFrom, withEnvelope, type Envelope } from "../../cache/envelope";
import { keyAnswer, type RequestKey } from "../../cache/key";
import { scanJson } from "../../cache/exact-json";
import { chatMessage } from "../../cache/messages";
import { SseAssembler } from "../../cache/sse-assembler";
import { recordInputOf } from "../../store/record";
import type { AnswerReader, Recording } from "../generation";

interface UpstreamCompletion {
  error?: unknown;
  object?: unknown;
  choices?: Array<{ index?: number; message?: unknown; finish_reason?: string | null }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
}

/**
 * Builds the record of a generation, or null when the answer is not complete or not cacheable.
 * `envelope`: what the model sent around the message that a hit serves back (src/cache/envelope.ts).
 */
export function recordingOf(key: RequestKey, message: unknown, finishReason: string | null | undefined, usage: UpstreamCompletion["usage"], rawLength: number, latencyMs: number, envelope?: Envelope): Recording {
  if (!finishReason || !RECORDABLE_FINISH.has(finishReason)) return null;
  const parsed = chatMessage.safeParse(envelope ? withEnvelope(message, envelope) : message);
  if (!parsed.success || parsed.data.role !== "assistant") return null;
  const answer = keyAnswer(key, parsed.data);
  if (!answer) return null;
  const path = key.path.map((s) => ({ hash: s.hash, parent: s.parent, role: s.message.role, json: s.json }));
  return recordInputOf({ ...key, path }, answer, finishReason, { prompt: usage?.prompt_tokens, completion: usage?.completion_tokens }, rawLength, latencyMs);
}

/**
 * Whether a 200 body is a plain answer: an object with `choices` and no
 * `error` (some gateways send both), of type `chat.completion` when it says.
 * Anything else is relayed to the client and never recorded.
 */
function isCleanCompletion(json: UpstreamCompletion): boolean {
  if (typeof json !== "object" || json === null || Array.isArray(json)) return false;
  if (json.error !== undefined && json.error !== null) return false;
  return Array.isArray(json.choices) && (json.object === undefined || json.object === "chat.completion");
}

/** Reads chat-completions answers (a `chat.completion` or its chunk stream) into recordings. */
export function chatAnswerReader(key: RequestKey, rawLength: number): AnswerReader {
  return {
    fromJson(text, latencyMs) {
      try {
        const json = JSON.parse(text) as UpstreamCompletion;
        if (!isCleanCompletion(json) || scanJson(text).lossy !== null) return null;
        const choice = json.choices?.find((c) => (c.index ?? 0) === 0);
        return recordingOf(key, choice?.message, choice?.finish_reason, json.usage, rawLength, latencyMs, envelopeFrom(choice, json));
      } catch {
        return null;
      }
    },
    stream() {
      const assembler = new SseAssembler();
      return {
        feed: (bytes) => assembler.feed(bytes),
        finish: (latencyMs) => {
          const result = assembler.result();
          return result ? recordingOf(key, result.message, result.finishReason, result.usage, rawLength, latencyMs, result.envelope) : null;
        },
      };
    },
  };
}
