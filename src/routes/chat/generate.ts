import { RECORDABLE_FINISH } from "../../cache/answer";
import { keyAnswer, type RequestKey } from "../../cache/key";
import { chatMessage } from "../../cache/messages";
import { SseAssembler } from "../../cache/sse-assembler";
import { ApiError } from "../../errors";
import type { RecordInput } from "../../store/record";
import { forward, relayResponse } from "../../upstream/forward";
import { CACHE_HEADER, type CacheOutcome } from "./respond";

/** What the model produced, ready to record; null when it must not be recorded. */
export type Recording = RecordInput | null;

export interface GenerateOptions {
  request: Request;
  raw: string;
  base: string;
  /** UPSTREAM_TIMEOUT_MS: how long the upstream may take to answer with its headers. */
  timeoutMs?: number;
  stream: boolean;
  key: RequestKey;
  outcome: CacheOutcome;
  /** Called once, when the generation is known complete (a RecordInput) or unusable (null). */
  onSettled: (recording: Recording) => Promise<void>;
  waitUntil: (promise: Promise<unknown>) => void;
}

interface UpstreamCompletion {
  choices?: Array<{ index?: number; message?: unknown; finish_reason?: string | null }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
}

/** Builds the record of a generation, or null when the answer is not complete or not cacheable. */
export function recordingOf(key: RequestKey, message: unknown, finishReason: string | null | undefined, usage: UpstreamCompletion["usage"], rawLength: number, latencyMs: number): Recording {
  if (!finishReason || !RECORDABLE_FINISH.has(finishReason)) return null;
  const parsed = chatMessage.safeParse(message);
  if (!parsed.success || parsed.data.role !== "assistant") return null;
  const answer = keyAnswer(key, parsed.data);
  if (!answer) return null;
  return {
    treeId: key.treeId,
    tenant: key.tenant,
    namespace: key.namespace,
    model: key.model,
    frameJson: key.frameJson,
    path: key.path.map((s) => ({ hash: s.hash, parent: s.parent, role: s.message.role, json: s.json })),
    answer: {
      hash: answer.hash,
      parent: key.key,
      role: "assistant",
      json: answer.json,
      finishReason,
      // Without upstream usage (a stream without include_usage), estimate at 4 characters a token.
      promptTokens: usage?.prompt_tokens ?? Math.ceil(rawLength / 4),
      completionTokens: usage?.completion_tokens ?? Math.ceil(answer.json.length / 4),
      latencyMs,
    },
  };
}

/**
 * Sends a miss to the model. A JSON answer is read whole, then relayed; a
 * stream is relayed chunk by chunk as it arrives while an assembler rebuilds
 * the message. Either way `onSettled` learns whether there is something to
 * record: never for upstream errors, truncated streams or client aborts.
 */
export async function generate(opts: GenerateOptions): Promise<Response> {
  const started = Date.now();
  let upstream: Response;
  try {
    upstream = await forward({ base: opts.base, pathname: "/v1/chat/completions", method: "POST", headers: opts.request.headers, body: opts.raw, signal: opts.request.signal, timeoutMs: opts.timeoutMs });
  } catch (error) {
    opts.waitUntil(opts.onSettled(null));
    // The upstream timed out or could not be reached: say so in the envelope, with the cache outcome.
    if (error instanceof ApiError) return error.toResponse({ [CACHE_HEADER]: opts.outcome });
    throw error;
  }
  const headers = { [CACHE_HEADER]: opts.outcome };
  if (!upstream.ok || !upstream.body) {
    opts.waitUntil(opts.onSettled(null));
    return relayResponse(upstream, upstream.body, headers);
  }
  if (!opts.stream) {
    const text = await upstream.text();
    let recording: Recording = null;
    try {
      const json = JSON.parse(text) as UpstreamCompletion;
      const choice = json.choices?.find((c) => (c.index ?? 0) === 0);
      recording = recordingOf(opts.key, choice?.message, choice?.finish_reason, json.usage, opts.raw.length, Date.now() - started);
    } catch {
      recording = null;
    }
    opts.waitUntil(opts.onSettled(recording));
    return relayResponse(upstream, text, headers);
  }
  return relayResponse(upstream, teeStream(upstream.body, opts, started), headers);
}

/** Passes the upstream bytes to the client as they arrive and records the assembled answer at the end. */
function teeStream(body: ReadableStream<Uint8Array>, opts: GenerateOptions, started: number): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const assembler = new SseAssembler();
  let settle!: (recording: Recording) => void;
  const settled = new Promise<Recording>((resolve) => (settle = resolve));
  opts.waitUntil(settled.then((recording) => opts.onSettled(recording)));
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          controller.close();
          const result = assembler.result();
          settle(result ? recordingOf(opts.key, result.message, result.finishReason, result.usage, opts.raw.length, Date.now() - started) : null);
          return;
        }
        assembler.feed(value);
        controller.enqueue(value);
      } catch (error) {
        settle(null);
        controller.error(error);
      }
    },
    async cancel(reason) {
      settle(null);
      await reader.cancel(reason).catch(() => undefined);
    },
  });
}
