import { RECORDABLE_FINISH } from "../../core/answer";
import { envelopeFrom, RENEWED_RESPONSE, withEnvelope, type Envelope } from "../../core/envelope";
import { keyAnswer, type RequestKey } from "./key";
import { respelledIn, scanJson } from "../../core/exact-json";
import { isJsonText } from "../../core/json-text";
import { chatMessage } from "../../core/messages";
import { SseAssembler } from "./sse-assembler";
import { recordInputOf } from "../../core/recording";
import type { AnswerReader, Recording } from "../../core/recording";

interface UpstreamCompletion {
  error?: unknown;
  object?: unknown;
  choices?: Array<{ index?: number; message?: unknown; finish_reason?: string | null }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
}

/**
 * Builds the record of a generation, or null when the answer is not complete or not cacheable.
 * `envelope`: what the model sent around the message that a hit serves back (src/core/envelope.ts).
 */
export function recordingOf(
  key: RequestKey,
  message: unknown,
  finishReason: string | null | undefined,
  usage: UpstreamCompletion["usage"],
  rawLength: number,
  latencyMs: number,
  envelope?: Envelope,
): Recording {
  if (!finishReason || !RECORDABLE_FINISH.has(finishReason)) return null;
  if (finishReason === "length" && cutCall(message)) return null;
  // Content as a list of parts: a hit serves text (joined) or a refusal, never the parts the model sent.
  if (Array.isArray((message as { content?: unknown } | null)?.content)) return null;
  const parsed = chatMessage.safeParse(envelope ? withEnvelope(message, envelope) : message);
  if (!parsed.success || parsed.data.role !== "assistant") return null;
  const answer = keyAnswer(key, parsed.data);
  if (!answer) return null;
  const path = key.path.map((s) => ({ hash: s.hash, parent: s.parent, role: s.message.role, json: s.json }));
  return recordInputOf({ ...key, path }, answer, finishReason, { prompt: usage?.prompt_tokens, completion: usage?.completion_tokens }, rawLength, latencyMs);
}

/** Whether the arguments are JSON text that is complete (parses). */
const isJson = (text: unknown): boolean => typeof text === "string" && isJsonText(text);

/**
 * Whether an answer stopped by `length` holds a tool or function call whose arguments are not whole JSON:
 * the model was cut mid-call, a fragment no agent can run (a retry of the same request would be served
 * it again). Text cut by `length` is recorded (the model's answer to that `max_tokens`), and so are
 * arguments that are not JSON in an answer the model finished.
 */
function cutCall(message: unknown): boolean {
  const m = message as { tool_calls?: Array<{ function?: { arguments?: unknown } }> | null; function_call?: { arguments?: unknown } | null } | null | undefined;
  if (typeof m !== "object" || m === null) return false;
  if (m.function_call && !isJson(m.function_call.arguments)) return true;
  return Array.isArray(m.tool_calls) && m.tool_calls.some((call) => !isJson(call?.function?.arguments));
}

/**
 * Whether a 200 body is a plain answer: an object with `choices` and no
 * `error` (some gateways send both), of type `chat.completion` when it says.
 * Anything else is relayed to the client and never recorded.
 */
function isCleanCompletion(json: UpstreamCompletion): boolean {
  if (typeof json !== "object" || json === null || Array.isArray(json)) return false;
  if (json.error !== undefined && json.error !== null) return false;
  // One choice, index 0: a hit serves one, so an answer with several (an upstream that ignores `n`) is not recorded.
  if (!Array.isArray(json.choices) || json.choices.length !== 1 || (json.choices[0]?.index ?? 0) !== 0) return false;
  return json.object === undefined || json.object === "chat.completion";
}

/**
 * The choice fields a JSON hit renders itself; every other field of the choice (its `message` included) and of
 * the response but those a hit renews is served as recorded, so a number the model wrote otherwise than
 * JSON.stringify would there (`1.0`) makes the answer not recorded (src/core/exact-json.ts, respelledIn).
 * Call arguments are text and keep their spelling.
 */
const servedAsParsed = ([field]: string[], choice: boolean): boolean => (choice ? field !== "index" : !RENEWED_RESPONSE.has(field));

/** Reads chat-completions answers (a `chat.completion` or its chunk stream) into recordings. */
export function chatAnswerReader(key: RequestKey, rawLength: number): AnswerReader {
  return {
    fromJson(text, latencyMs) {
      try {
        const json = JSON.parse(text) as UpstreamCompletion;
        if (!isCleanCompletion(json) || scanJson(text).lossy !== null || respelledIn(text, "choices", servedAsParsed)) return null;
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
