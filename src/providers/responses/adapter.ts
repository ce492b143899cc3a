import type { ProviderAdapter, ProviderRecording, UpstreamReader } from "../../cache/provider";
import { responseEnvelopeOf } from "./envelope";
import { respelledIn, scanJson } from "../../core/exact-json";
import { bodySpellings, NUMBERS_KEY, type Spelling } from "../../core/number-text";
import { fieldOf, isSpellings } from "../../core/spelled-json";
import { BoundedMemo } from "../../core/memo";
import { keyResponsesAnswer, keyResponsesRequest, type ResponsesKey } from "./key";
import { renderResponseEvents, renderResponseJson, responsesAnswerOf, type ResponsesAnswer } from "./render";
import { responsesRequest, type ResponsesRequest } from "./schema";
import { ResponsesStreamReader } from "./stream";
import { responsesUpstreamBody } from "./upstream-body";
import { servedResponseId, upstreamResponseId } from "./previous";
import { previousResponseIdOf, resolvePreviousResponse } from "./resolve";
import { recordInputOf } from "../../core/recording";
import { OPENAI_UPSTREAM } from "../openai";
import { upstreamBase } from "../upstream";

interface UpstreamResponse {
  id?: unknown;
  status?: string;
  output?: unknown;
  usage?: { input_tokens?: number | null; output_tokens?: number | null } | null;
  error?: unknown;
}

/**
 * The record of a completed response, or null (incomplete, failed, server-tool output); its fields around the
 * output are stored with the answer (src/providers/responses/envelope.ts).
 */
export function recordingOfResponse(
  key: ResponsesKey,
  response: unknown,
  rawLength: number,
  latencyMs: number,
  spelled: readonly Spelling[] = [],
): ProviderRecording {
  const r = response as UpstreamResponse | null;
  if (!r || typeof r !== "object" || r.status !== "completed" || !Array.isArray(r.output)) return null;
  // A completed response that also carries an error (a gateway's partial answer): not the model's whole answer.
  if (r.error !== undefined && r.error !== null) return null;
  // A number in an output item written otherwise than JSON.stringify would (a vendor field's `1.0`): the items are
  // stored as parsed, so a hit would write it JavaScript's way. Not recorded (a stream's spellings name the items).
  if (spelled.some(([pointer]) => fieldOf(pointer) === "output")) return null;
  const around = responseEnvelopeOf(r as Record<string, unknown>, JSON.parse(key.frameJson) as Record<string, unknown>, spelled);
  const answer = keyResponsesAnswer(key, r.output, around);
  if (!answer) return null;
  const recording = recordInputOf(key, answer, "completed", { prompt: r.usage?.input_tokens, completion: r.usage?.output_tokens }, rawLength, latencyMs);
  const upstream = upstreamOf(r.id, r.output);
  return upstream ? { ...recording, upstream } : recording;
}

/** The upstream's id of the response and the `call_id` of each of its calls, in order; null when it gave no usable id. */
function upstreamOf(responseId: unknown, output: unknown[]): { id: string; callIds: string[] } | null {
  const id = upstreamResponseId.safeParse(responseId);
  if (!id.success) return null;
  const calls = (output as Array<{ type?: unknown; call_id?: unknown }>).filter((item) => item.type === "function_call" || item.type === "custom_tool_call");
  const callIds = calls.map((item) => item.call_id).filter((callId): callId is string => typeof callId === "string");
  return callIds.length === calls.length ? { id: id.data, callIds } : null;
}

/** Frames' spellings, isolate-wide and bounded (1M characters of frames and spellings): every hit of a tree has its frame. */
const spellingsOfFrame = new BoundedMemo<Spelling[]>(1 << 20, (spelled) => spelled.reduce((n, [pointer, text]) => n + pointer.length + text.length, 0));

/**
 * The request's numbers written otherwise than JSON.stringify would, outside `input`, as its frame keeps them
 * (none: the common case, no parse; a Python client's `1.0` parses its tree's frame once per isolate).
 */
function frameSpellings(frameJson: string): Spelling[] {
  if (!frameJson.includes(`"${NUMBERS_KEY}"`)) return [];
  let spelled = spellingsOfFrame.get(frameJson);
  if (!spelled) {
    const stored = (JSON.parse(frameJson) as Record<string, unknown>)[NUMBERS_KEY];
    spellingsOfFrame.set(frameJson, (spelled = isSpellings(stored) ? stored : []));
  }
  return spelled;
}

function responsesReader(key: ResponsesKey, rawLength: number): UpstreamReader {
  return {
    fromJson(text, latencyMs) {
      try {
        // Its fields are recorded as sent: a number or a repeated key JSON.parse would change keeps it out.
        // Numbers written otherwise than JSON.stringify would are stored with their text (./envelope.ts).
        if (scanJson(text).lossy !== null || respelledIn(text, "output", (_tokens, item) => item)) return null;
        return recordingOfResponse(key, JSON.parse(text), rawLength, latencyMs, bodySpellings(text, "output", false)?.top);
      } catch {
        return null;
      }
    },
    stream() {
      const reader = new ResponsesStreamReader();
      return { feed: (bytes) => reader.feed(bytes), finish: (latencyMs) => recordingOfResponse(key, reader.result(), rawLength, latencyMs, reader.spelled) };
    },
  };
}

/**
 * The OpenAI Responses API (`POST /v1/responses`) over the cached flow:
 * upstream `UPSTREAM_BASE_URL`, OpenAI's error
 * envelope. Keying and bypass rules: src/providers/responses/frame.ts; a
 * `previous_response_id` the Worker issued is resolved from the tree (./previous.ts).
 */
export const responsesAdapter: ProviderAdapter<ResponsesRequest, ResponsesKey, ResponsesAnswer> = {
  name: "responses",
  schema: responsesRequest,
  isStream: ({ body }) => body.stream === true,
  resolve: resolvePreviousResponse,
  key: ({ body, url, headers, raw }, scope) => keyResponsesRequest(body, scope, { url, headers, raw }),
  upstream: (config) => ({ ...upstreamBase(config, OPENAI_UPSTREAM), pathname: "/v1/responses" }),
  upstreamBody: ({ raw, body }) => responsesUpstreamBody(raw, body.input),
  answerOf: responsesAnswerOf,
  render(answer, { body }, stream, key) {
    const ctx = {
      id: servedResponseId(key.treeId, answer.hash),
      createdAt: Math.floor(Date.now() / 1000),
      previousResponseId: previousResponseIdOf(body),
      requestSpellings: frameSpellings(key.frameJson),
    };
    if (stream) return { body: renderResponseEvents(answer, body, ctx), contentType: "text/event-stream; charset=utf-8" };
    return { body: renderResponseJson(answer, body, ctx), contentType: "application/json" };
  },
  reader: (key, { raw }) => responsesReader(key, raw.length),
  errorResponse: (error, headers) => error.toResponse(headers),
};
