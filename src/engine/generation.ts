import { ApiError } from "../core/errors";
import { logEvent } from "../observability/log-event";
import type { AnswerReader, Recording } from "../core/recording";
import { forward, queryOf, relayResponse, stillEncoded } from "../upstream/forward";
import { recordableType } from "../core/answer-type";
import { CACHE_HEADER } from "../core/protocol";
import { breathe } from "../core/timer-turn";
import { DEFAULT_MAX_CACHEABLE_MESSAGE_BYTES } from "../core/limits";
import type { CacheOutcome } from "./outcome";

export type { AnswerReader, Recording } from "../core/recording";

export interface GenerationOptions {
  request: Request;
  raw: string;
  base: string;
  /** The route's path, e.g. `/v1/chat/completions` (`/v1` is replaced by `base`). */
  pathname: string;
  /** The query sent upstream (e.g. Gemini's `?alt=sse`); default: the client's own query string. */
  search?: string;
  /** The Worker's own errors (upstream unreachable, timed out, cut off) in the API's envelope; default OpenAI's. */
  errorResponse?: (error: ApiError, headers: Record<string, string>) => Response;
  /** The var that sets `base`, named in the envelope when the upstream cannot be reached. */
  baseVar?: string;
  /** UPSTREAM_TIMEOUT_MS: how long the upstream may take to answer with its headers. */
  timeoutMs?: number;
  /**
   * How many bytes of a stream the Worker reads from the upstream ahead of its client (default
   * MAX_CACHEABLE_MESSAGE_BYTES' default): past it the answer is no longer recorded and the rest is relayed at the client's pace.
   */
  readAheadBytes?: number;
  stream: boolean;
  outcome: CacheOutcome;
  reader: AnswerReader;
  /** Called once, when the generation is known complete (a RecordInput) or unusable (null). */
  onSettled: (recording: Recording) => Promise<void>;
  /** Told, when the answer has reached the client (or failed), of the settling that follows: done when `onSettled` is. */
  settling?: (settled: Promise<void>) => void;
  waitUntil: (promise: Promise<unknown>) => void;
}

/**
 * Sends a miss to the model. A JSON answer is read whole, then relayed; a
 * stream is read at the upstream's pace (up to `readAheadBytes` ahead of the
 * client) and relayed chunk by chunk while the reader's assembler rebuilds the
 * message, so a slow client never holds the flight's followers. Either way `onSettled` runs exactly once and learns
 * whether there is something to record: never for upstream errors, truncated
 * bodies or streams, client aborts, or anything that throws on the way (so
 * the single-flight claim is always released).
 */
export async function generate(opts: GenerationOptions): Promise<Response> {
  let done = false;
  const settle = (recording: Recording | (() => Recording)) => {
    if (done) return;
    done = true;
    // After a timer turn: a JSON answer settles just before its response is returned, and the recording's
    // RPC (the whole path, serialised) and the object's D1 calls would otherwise share the thread with
    // writing that response. Under wrangler dev that cost the JSON miss ~2 ms p50 (bench/miss-floor-probe.ts).
    const settled = breathe().then(() => opts.onSettled(typeof recording === "function" ? recording() : recording));
    opts.settling?.(settled);
    opts.waitUntil(settled);
  };
  try {
    return await generateOnce(opts, settle);
  } catch (error) {
    settle(null);
    throw error;
  }
}

async function generateOnce(opts: GenerationOptions, settle: (recording: Recording | (() => Recording)) => void): Promise<Response> {
  const started = Date.now();
  const headers = { [CACHE_HEADER]: opts.outcome };
  let upstream: Response;
  try {
    upstream = await forward({
      base: opts.base,
      pathname: opts.pathname,
      search: opts.search ?? queryOf(opts.request.url, opts.pathname),
      method: "POST",
      headers: opts.request.headers,
      body: opts.raw,
      signal: opts.request.signal,
      timeoutMs: opts.timeoutMs,
      baseVar: opts.baseVar,
    });
  } catch (error) {
    settle(null);
    // The upstream timed out or could not be reached: say so in the envelope, with the cache outcome.
    if (error instanceof ApiError) return answerError(opts, error, headers);
    throw error;
  }
  // Not a 200 (an error; a 2xx that is not the whole answer: 206 partial content, 203 changed by a proxy, 202
  // queued), a body still in an encoding the runtime did not decode (`deflate`), or a content-type other than the answer's form
  // (a gateway's `text/html` around JSON: src/core/answer-type.ts): relayed as sent, never read.
  if (upstream.status !== 200 || !upstream.body || stillEncoded(upstream.headers) || !recordableType(upstream.headers.get("content-type"), opts.stream)) {
    settle(null);
    return relayResponse(upstream, upstream.body, headers);
  }
  if (!opts.stream) {
    let bytes: ArrayBuffer;
    try {
      bytes = await upstream.arrayBuffer();
    } catch (error) {
      // Cut after its headers (connection lost, client abort): nothing to record, and a 502 rather than a 500.
      settle(null);
      logEvent("error", "upstream_incomplete", { aborted: opts.request.signal.aborted, error: String(error) });
      return answerError(opts, new ApiError("upstream_incomplete", "The upstream model's answer was cut off before it was complete."), headers);
    }
    // Read (parsed, canonicalised, hashed) after the response, with the recording: the client does not wait for it.
    const latencyMs = Date.now() - started;
    settle(() => {
      const text = utf8TextOf(bytes, upstream.headers);
      return text === null ? null : readSafely(() => opts.reader.fromJson(text, latencyMs), false);
    });
    // The upstream's bytes as sent: a decoded and re-encoded text would replace bytes that are not UTF-8 and drop a BOM.
    return relayResponse(upstream, bytes, headers);
  }
  // A body in another charset than UTF-8: relayed as sent, never read as UTF-8 text.
  if (!isUtf8(upstream.headers)) {
    settle(null);
    return relayResponse(upstream, upstream.body, headers);
  }
  // The request stays open until the stream settles: when a client hangs up mid-stream over HTTP and the
  // request has no pending work, workerd drops the stream without calling its cancel, so nothing settled and
  // the single-flight claim was held until its lease ran out (test/e2e/clients-openai-faults.test.ts).
  let ended = () => {};
  opts.waitUntil(
    new Promise<void>((resolve) => {
      ended = resolve;
    }),
  );
  const settleAndEnd = (recording: Recording) => {
    settle(recording);
    ended();
  };
  const readAhead = opts.readAheadBytes ?? DEFAULT_MAX_CACHEABLE_MESSAGE_BYTES;
  return relayResponse(upstream, teeStream(upstream.body, opts.reader, settleAndEnd, started, readAhead), headers);
}

/** Whether a body's content-type says it is UTF-8 text: no charset (JSON and SSE are UTF-8), or `utf-8`. */
function isUtf8(headers: Headers): boolean {
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(headers.get("content-type") ?? "")?.[1]?.toLowerCase();
  return charset === undefined || charset === "utf-8" || charset === "utf8";
}

/**
 * A JSON body's text for the reader, or null when it is not UTF-8 (a charset that says otherwise, bytes that are
 * not UTF-8): decoding would replace what the model sent with U+FFFD, a recording the upstream never sent.
 */
function utf8TextOf(bytes: ArrayBuffer, headers: Headers): string | null {
  if (!isUtf8(headers)) return null;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}

/**
 * A reader that throws has nothing to record: the answer is still relayed, the claim still released. A complete
 * answer the reader leaves unrecorded (one a replay could not serve exactly: the request misses next time) is logged.
 */
function readSafely(read: () => Recording, stream: boolean): Recording {
  try {
    const recording = read();
    if (recording === null) logEvent("info", "answer_not_recorded", { stream });
    return recording;
  } catch (error) {
    logEvent("error", "answer_unreadable", { error: String(error) });
    return null;
  }
}

/** Feeds the assembler; false (logged) when it throws. */
function fedSafely(feed: () => void): boolean {
  try {
    feed();
    return true;
  } catch (error) {
    logEvent("error", "answer_unreadable", { error: String(error) });
    return false;
  }
}

/**
 * Passes the upstream bytes to the client and records the assembled answer at the end. The upstream is read at
 * its own pace, not the client's: the stream's queue holds up to `readAhead` bytes the client has not read yet,
 * so the answer is recorded (and the flight's followers served) when the model finishes, whatever the client
 * does. A client that falls further behind (or stops reading) ends the recording (the claim is released: the
 * followers go to the model) and the rest is relayed at its pace, so memory stays bounded. A client that
 * cancels cancels the upstream and records nothing, unless the whole answer was already read. An assembler
 * that throws stops assembling (nothing is recorded) but never breaks the client's stream.
 */
function teeStream(
  body: ReadableStream<Uint8Array>,
  answerReader: AnswerReader,
  settle: (recording: Recording) => void,
  started: number,
  readAhead: number,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const assembler = answerReader.stream();
  let broken = false;
  let cancelled = false;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let chunk: ReadableStreamReadResult<Uint8Array>;
        try {
          chunk = await reader.read();
        } catch (error) {
          settle(null);
          if (!cancelled) controller.error(error);
          return;
        }
        // Read ahead, a pull can be waiting on the upstream when the client cancels: nothing to pass on.
        if (cancelled) return;
        if (chunk.done) {
          settle(broken ? null : readSafely(() => assembler.finish(Date.now() - started), true));
          controller.close();
          return;
        }
        if (!broken) broken = !fedSafely(() => assembler.feed(chunk.value));
        controller.enqueue(chunk.value);
        // Queued past the bound: the client is that far behind. Recording would mean buffering without end.
        if (!broken && (controller.desiredSize ?? 0) <= 0) {
          broken = true;
          logEvent("warn", "recording_dropped", { reason: "client behind", readAheadBytes: readAhead });
          settle(null);
        }
      },
      async cancel(reason) {
        cancelled = true;
        settle(null);
        await reader.cancel(reason).catch(() => undefined);
      },
    },
    // While the queue holds less than this, the stream pulls from the upstream again at once (read-ahead).
    { highWaterMark: readAhead, size: (chunk) => chunk.byteLength },
  );
}

/** One of the Worker's own errors in the route's envelope. */
function answerError(opts: GenerationOptions, error: ApiError, headers: Record<string, string>): Response {
  return opts.errorResponse ? opts.errorResponse(error, headers) : error.toResponse(headers);
}
