import { ApiError } from "../errors";
import type { RecordInput } from "../store/record";
import { forward, relayResponse } from "../upstream/forward";
import { CACHE_HEADER, type CacheOutcome } from "./chat/respond";

/** What the model produced, ready to record; null when it must not be recorded. */
export type Recording = RecordInput | null;

/** How one API (chat completions, messages) turns its upstream's answer into a recording. */
export interface AnswerReader {
  /** A whole JSON answer body; null when it is not a complete, cacheable answer. */
  fromJson(text: string, latencyMs: number): Recording;
  /** A fresh assembler for one stream: bytes in, at the end the recording (null when cut or erroneous). */
  stream(): { feed(bytes: Uint8Array): void; finish(latencyMs: number): Recording };
}

export interface GenerationOptions {
  request: Request;
  raw: string;
  base: string;
  /** The route's path, e.g. `/v1/chat/completions` (`/v1` is replaced by `base`). */
  pathname: string;
  /** UPSTREAM_TIMEOUT_MS: how long the upstream may take to answer with its headers. */
  timeoutMs?: number;
  stream: boolean;
  outcome: CacheOutcome;
  reader: AnswerReader;
  /** Called once, when the generation is known complete (a RecordInput) or unusable (null). */
  onSettled: (recording: Recording) => Promise<void>;
  waitUntil: (promise: Promise<unknown>) => void;
}

/**
 * Sends a miss to the model. A JSON answer is read whole, then relayed; a
 * stream is relayed chunk by chunk as it arrives while the reader's assembler
 * rebuilds the message. Either way `onSettled` learns whether there is
 * something to record: never for upstream errors, truncated streams or
 * client aborts.
 */
export async function generate(opts: GenerationOptions): Promise<Response> {
  const started = Date.now();
  const headers = { [CACHE_HEADER]: opts.outcome };
  let upstream: Response;
  try {
    upstream = await forward({ base: opts.base, pathname: opts.pathname, method: "POST", headers: opts.request.headers, body: opts.raw, signal: opts.request.signal, timeoutMs: opts.timeoutMs });
  } catch (error) {
    opts.waitUntil(opts.onSettled(null));
    // The upstream timed out or could not be reached: say so in the envelope, with the cache outcome.
    if (error instanceof ApiError) return error.toResponse(headers);
    throw error;
  }
  if (!upstream.ok || !upstream.body) {
    opts.waitUntil(opts.onSettled(null));
    return relayResponse(upstream, upstream.body, headers);
  }
  if (!opts.stream) {
    const text = await upstream.text();
    opts.waitUntil(opts.onSettled(opts.reader.fromJson(text, Date.now() - started)));
    return relayResponse(upstream, text, headers);
  }
  return relayResponse(upstream, teeStream(upstream.body, opts, started), headers);
}

/** Passes the upstream bytes to the client as they arrive and records the assembled answer at the end. */
function teeStream(body: ReadableStream<Uint8Array>, opts: GenerationOptions, started: number): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const assembler = opts.reader.stream();
  let settle!: (recording: Recording) => void;
  const settled = new Promise<Recording>((resolve) => (settle = resolve));
  opts.waitUntil(settled.then((recording) => opts.onSettled(recording)));
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          controller.close();
          settle(assembler.finish(Date.now() - started));
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
