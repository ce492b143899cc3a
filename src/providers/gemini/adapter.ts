import { callArgsTexts } from "./args-text";
import { geminiErrorBody } from "./errors";
import { errorHeaders } from "../../core/errors";
import { keyGeminiAnswer, keyGeminiRequest, type GeminiKey } from "./key";
import { LAYOUT_KEY } from "./layout";
import { geminiAnswerOf, renderGenerateContentJson, renderGenerateContentStream, type GeminiAnswer } from "./render";
import { generateContentRequest, type Content, type GenerateContentRequest } from "./schema";
import { assembledOf, GeminiStreamReader, type GeminiAssembled, type GeminiChunk } from "./stream";
import type { ProviderAdapter, ProviderRecording, UpstreamReader } from "../../cache/provider";
import { scanJson } from "../../core/exact-json";
import { recordInputOf } from "../../core/recording";
import { upstreamBase, type UpstreamVar } from "../upstream";

/** Google's upstream, whose base names no API version: the path keeps its own (`/v1beta/`, `/v1/`). */
export const GEMINI_UPSTREAM: UpstreamVar = {
  name: "GEMINI_BASE_URL",
  fallback: "https://generativelanguage.googleapis.com",
  keyCheck: { id: "gemini", pathname: "/v1beta/models", keyPrefix: "AIza", headers: (key) => new Headers({ "x-goog-api-key": key }) },
};

/**
 * `/v1beta/models/{model}:{action}` or `/v1/models/{model}:{action}` (the stable API version): the model, the
 * API version and whether the action streams; null for other paths.
 */
export function geminiAction(url: URL): { model: string; version: "v1" | "v1beta"; stream: boolean } | null {
  const match = /^\/(v1beta|v1)\/models\/([^/:]+):(generateContent|streamGenerateContent)$/.exec(url.pathname);
  if (!match) return null;
  return { model: decodeURIComponent(match[2]), version: match[1] as "v1" | "v1beta", stream: match[3] === "streamGenerateContent" };
}

/** Finish reasons of a complete, replayable generation (safety stops, recitation and the like are not). */
const RECORDABLE = new Set(["STOP", "MAX_TOKENS"]);

function recordingOf(key: GeminiKey, assembled: GeminiAssembled | null, rawLength: number, latencyMs: number, text?: string): ProviderRecording {
  if (!assembled || !RECORDABLE.has(assembled.finishReason)) return null;
  const candidate = assembled.chunks ? { ...assembled.metadata, [LAYOUT_KEY]: assembled.chunks } : assembled.metadata;
  // The calls' args as written: a JSON answer's from its text, a stream's as its chunks wrote them.
  const argsTexts = text === undefined ? (assembled.argsTexts ?? []) : callArgsTexts(text, assembled.content.parts);
  const answer = keyGeminiAnswer(key, assembled.content as Content, candidate, argsTexts);
  if (!answer) return null;
  const usage = { prompt: assembled.usage?.promptTokenCount, completion: assembled.usage?.candidatesTokenCount };
  return recordInputOf(key, answer, assembled.finishReason, usage, rawLength, latencyMs);
}

function geminiReader(key: GeminiKey, rawLength: number): UpstreamReader {
  return {
    fromJson(text, latencyMs) {
      // Keys as written (a quote in one, a repeat): else what was parsed is not what the model sent. A number a double
      // cannot hold is no reason: the calls' args are kept as their text (src/providers/gemini/args-text.ts).
      if (scanJson(text, { numbers: false }).lossy !== null) return null;
      try {
        return recordingOf(key, assembledOf(JSON.parse(text) as GeminiChunk, text), rawLength, latencyMs, text);
      } catch {
        return null;
      }
    },
    stream() {
      const reader = new GeminiStreamReader();
      return { feed: (bytes) => reader.feed(bytes), finish: (latencyMs) => recordingOf(key, reader.result(), rawLength, latencyMs) };
    },
  };
}

/**
 * Gemini's `generateContent` and `streamGenerateContent?alt=sse` over the
 * cached flow: the model from the URL, upstream `GEMINI_BASE_URL` (path and
 * query as sent), errors in Gemini's `{error:{code,message,status}}` envelope.
 */
export const geminiAdapter: ProviderAdapter<GenerateContentRequest, GeminiKey, GeminiAnswer> = {
  name: "gemini",
  schema: generateContentRequest,
  isStream: ({ url }) => geminiAction(url)?.stream === true,
  key({ body, url, headers }, scope) {
    const action = geminiAction(url);
    if (!action) return { ok: false, bypass: "not a generate action" };
    // Without alt=sse the stream is one JSON array, which the cache does not assemble.
    if (action.stream && url.searchParams.get("alt") !== "sse") return { ok: false, bypass: "stream without alt=sse" };
    return keyGeminiRequest(body, action.model, scope, url, headers);
  },
  upstream: (config, { url }) => ({ ...upstreamBase(config, GEMINI_UPSTREAM), pathname: url.pathname, search: url.search }),
  answerOf: geminiAnswerOf,
  render(answer, { url }, stream) {
    const ctx = { model: geminiAction(url)?.model ?? "", responseId: `mm${crypto.randomUUID().replaceAll("-", "")}` };
    if (stream) return { body: renderGenerateContentStream(answer, ctx), contentType: "text/event-stream" };
    return { body: renderGenerateContentJson(answer, ctx), contentType: "application/json; charset=UTF-8" };
  },
  reader: (key, { raw }) => geminiReader(key, raw.length),
  errorResponse: (error, headers) =>
    Response.json(geminiErrorBody(error.status, error.message), { status: error.status, headers: { ...errorHeaders(error), ...headers } }),
};
