import type { ProviderAdapter } from "../../cache/provider";
import type { StoredAnswer } from "../../core/answer";
import type { ChatRequest } from "../../core/messages";
import { chatAdapter } from "../chat/adapter";
import { keyRequest, type RequestKey } from "../chat/key";
import { chatTrajectory } from "../chat/trajectory-format";
import { chatPreview, chatView } from "../chat/view";
import { templatedProviderModule } from "../module";
import { upstreamBase } from "../upstream";
import { GEMINI_UPSTREAM } from "./adapter";
import { chatRequestPaths } from "../chat/request-paths";

/** Gemini's OpenAI-compatible Chat Completions route, as the `openai` clients call it with `baseURL: …/v1beta/openai`. */
export const GEMINI_OPENAI_PATH = "/v1beta/openai/chat/completions";

/**
 * The frame's `muscle-mem:upstream` on this route (src/core/upstream-frame.ts): the same body sent to
 * `/v1/chat/completions` (OpenAI's upstream) keys another tree, so neither upstream is served the other's answers.
 */
export const GEMINI_OPENAI_UPSTREAM = "GEMINI_BASE_URL/v1beta/openai";

/**
 * Chat Completions on Gemini's OpenAI-compatible endpoint: chat's adapter (its schema, keying, templates,
 * render and stream reader: Gemini's compat layer answers chat completion JSON and SSE) with its upstream
 * `GEMINI_BASE_URL` + the path as sent, and the route's upstream in the frame.
 */
export const geminiOpenAIAdapter: ProviderAdapter<ChatRequest, RequestKey, StoredAnswer> = {
  ...chatAdapter,
  name: "gemini-openai",
  key: ({ body, url, headers, raw }, scope) =>
    keyRequest(body, scope.tenant, scope.namespace, scope.maxMessageBytes, { url, headers, raw, upstream: GEMINI_OPENAI_UPSTREAM }),
  upstream: (config) => ({ ...upstreamBase(config, GEMINI_UPSTREAM), pathname: GEMINI_OPENAI_PATH }),
};

/**
 * `POST /v1beta/openai/chat/completions`, cached as chat is (its trees are chat trees, exported and imported
 * as chat lines whose `params` keep `muscle-mem:upstream`). The tenant is the `Authorization: Bearer <Gemini
 * key>` the `openai` clients send. Gemini's other compat calls (`/v1beta/openai/models`, `/embeddings`) stay
 * with Gemini's `/v1beta/*` pass-through. Listed before Gemini in the registry: its route is mounted first.
 */
export const geminiOpenAI = templatedProviderModule(geminiOpenAIAdapter, {
  format: chatTrajectory,
  routes: { paths: [GEMINI_OPENAI_PATH], methodNotAllowed: true },
  // The `openai` clients send the Gemini key as `Authorization: Bearer`, which Gemini's compat layer reads.
  credentials: { asSent: ["authorization"] },
  upstream: GEMINI_UPSTREAM,
  view: chatView,
  preview: chatPreview,
  requestPaths: chatRequestPaths,
});
