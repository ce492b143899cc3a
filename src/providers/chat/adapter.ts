import type { StoredAnswer } from "../../core/answer";
import { keyRequest, type RequestKey } from "./key";
import { chatRequest, type ChatRequest } from "../../core/messages";
import type { ProviderAdapter } from "../../cache/provider";
import { renderChunkStream, renderCompletion } from "./render";
import { chatAnswerReader } from "./answer-reader";
import { chatAnswerOf } from "./stored-answer";
import { OPENAI_UPSTREAM } from "../openai";
import { upstreamBase } from "../upstream";

/**
 * OpenAI Chat Completions (`POST /v1/chat/completions`) over the cached flow:
 * upstream `UPSTREAM_BASE_URL`, OpenAI's error envelope, declared and learned
 * templates (src/engine/template-hook.ts, added where the route is wired). Keying and bypass rules: src/core/key.ts.
 */
export const chatAdapter: ProviderAdapter<ChatRequest, RequestKey, StoredAnswer> = {
  name: "chat",
  schema: chatRequest,
  isStream: ({ body }) => body.stream === true,
  key: ({ body, url, headers, raw }, scope) => keyRequest(body, scope.tenant, scope.namespace, scope.maxMessageBytes, { url, headers, raw }),
  upstream: (config) => ({ ...upstreamBase(config, OPENAI_UPSTREAM), pathname: "/v1/chat/completions" }),
  answerOf: chatAnswerOf,
  render(answer, { body }, stream) {
    const ctx = { id: `chatcmpl-mm${crypto.randomUUID().replaceAll("-", "")}`, model: body.model, created: Math.floor(Date.now() / 1000) };
    if (stream) return { body: renderChunkStream(answer, ctx, body.stream_options?.include_usage === true), contentType: "text/event-stream; charset=utf-8" };
    return { body: JSON.stringify(renderCompletion(answer, ctx)), contentType: "application/json" };
  },
  reader: (key, { raw }) => chatAnswerReader(key, raw.length),
  errorResponse: (error, headers) => error.toResponse(headers),
};
