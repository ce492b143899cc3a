import type { AnthropicKey } from "../../cache/anthropic/key";
import { AnthropicSseAssembler } from "../../cache/anthropic/sse-assembler";
import { ApiError } from "../../errors";
import { forward, relayResponse } from "../../upstream/forward";
import { CACHE_HEADER } from "../chat/respond";
import { recordingOfMessage, type MessagesUsage, type Recording } from "./record";

export interface GenerateMessageOptions {
  request: Request;
  raw: string;
  base: string;
  /** UPSTREAM_TIMEOUT_MS: how long the upstream may take to answer with its headers. */
  timeoutMs?: number;
  stream: boolean;
  key: AnthropicKey;
  /** Called once, when the generation is known complete (a RecordInput) or unusable (null). */
  onSettled: (recording: Recording) => Promise<void>;
  waitUntil: (promise: Promise<unknown>) => void;
}

interface UpstreamMessage {
  role?: string;
  content?: unknown;
  stop_reason?: string | null;
  stop_sequence?: string | null;
  usage?: MessagesUsage | null;
}

/**
 * Sends a Messages miss to the Anthropic upstream (`x-api-key` and
 * `anthropic-version` forwarded unchanged). A JSON answer is read whole and
 * relayed; an event stream is relayed as it arrives while an assembler
 * rebuilds the message. Upstream errors, truncated streams and client aborts
 * settle with null: nothing is recorded.
 */
export async function generateMessage(opts: GenerateMessageOptions): Promise<Response> {
  const started = Date.now();
  let upstream: Response;
  try {
    upstream = await forward({ base: opts.base, pathname: "/v1/messages", method: "POST", headers: opts.request.headers, body: opts.raw, signal: opts.request.signal, timeoutMs: opts.timeoutMs });
  } catch (error) {
    opts.waitUntil(opts.onSettled(null));
    // The upstream timed out or could not be reached: say so in the envelope, with the cache outcome.
    if (error instanceof ApiError) return error.toResponse({ [CACHE_HEADER]: "miss" });
    throw error;
  }
  const headers = { [CACHE_HEADER]: "miss" };
  if (!upstream.ok || !upstream.body) {
    opts.waitUntil(opts.onSettled(null));
    return relayResponse(upstream, upstream.body, headers);
  }
  if (!opts.stream) {
    const text = await upstream.text();
    opts.waitUntil(opts.onSettled(recordingOfJson(opts, text, Date.now() - started)));
    return relayResponse(upstream, text, headers);
  }
  return relayResponse(upstream, teeEvents(upstream.body, opts, started), headers);
}

function recordingOfJson(opts: GenerateMessageOptions, text: string, latencyMs: number): Recording {
  let json: UpstreamMessage;
  try {
    json = JSON.parse(text) as UpstreamMessage;
  } catch {
    return null;
  }
  const message = { role: json.role, content: json.content };
  return recordingOfMessage(opts.key, message, { reason: json.stop_reason, sequence: json.stop_sequence }, json.usage, opts.raw.length, latencyMs);
}

/** Passes the upstream events to the client as they arrive and records the assembled answer at the end. */
function teeEvents(body: ReadableStream<Uint8Array>, opts: GenerateMessageOptions, started: number): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const assembler = new AnthropicSseAssembler();
  let settle!: (recording: Recording) => void;
  const settled = new Promise<Recording>((resolve) => (settle = resolve));
  opts.waitUntil(settled.then((recording) => opts.onSettled(recording)));
  const finish = (): Recording => {
    const result = assembler.result();
    if (!result) return null;
    return recordingOfMessage(opts.key, result.message, { reason: result.stopReason, sequence: result.stopSequence }, result.usage, opts.raw.length, Date.now() - started);
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          controller.close();
          settle(finish());
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
