import { keyMessagesRequest, type AnthropicKey } from "./key";
import { anthropicAnswerOf, renderEventStream, renderMessageText, type AnthropicAnswer } from "./render";
import { messagesRequest, type MessagesRequest } from "./schema";
import type { ProviderAdapter } from "../../cache/provider";
import { messagesAnswerReader } from "./answer-reader";
import { anthropicErrorResponse } from "./errors";
import { upstreamBase, type UpstreamVar } from "../upstream";

/** Anthropic's upstream: `/v1/messages` and the calls that carry `anthropic-version` go there. */
export const ANTHROPIC_UPSTREAM: UpstreamVar = {
  name: "ANTHROPIC_BASE_URL",
  fallback: "https://api.anthropic.com/v1",
  // Its model list needs an `anthropic-version`; any version lists models.
  keyCheck: {
    id: "anthropic",
    pathname: "/v1/models",
    keyPrefix: "sk-ant-",
    headers: (key) => new Headers({ "x-api-key": key, "anthropic-version": "2023-06-01" }),
  },
};

/**
 * Anthropic Messages (`POST /v1/messages`) over the cached flow: Anthropic
 * canonical messages in trees of their own (the frame names the API and the
 * `anthropic-beta` header), upstream `ANTHROPIC_BASE_URL`, the Worker's errors
 * in Anthropic's envelope (./errors.ts). Keying and bypass rules: src/providers/anthropic/.
 */
export const messagesAdapter: ProviderAdapter<MessagesRequest, AnthropicKey, AnthropicAnswer> = {
  name: "messages",
  schema: messagesRequest,
  isStream: ({ body }) => body.stream === true,
  key: ({ body, headers, url, raw }, scope) => keyMessagesRequest(body, headers, scope.tenant, scope.namespace, scope.maxMessageBytes, { url, raw }),
  upstream: (config) => ({ ...upstreamBase(config, ANTHROPIC_UPSTREAM), pathname: "/v1/messages" }),
  answerOf: anthropicAnswerOf,
  render(answer, { body }, stream) {
    const ctx = { id: `msg_mm${crypto.randomUUID().replaceAll("-", "")}`, model: body.model };
    if (stream) return { body: renderEventStream(answer, ctx), contentType: "text/event-stream; charset=utf-8" };
    return { body: renderMessageText(answer, ctx), contentType: "application/json" };
  },
  reader: (key, { raw }) => messagesAnswerReader(key, raw.length),
  errorResponse: anthropicErrorResponse,
};
