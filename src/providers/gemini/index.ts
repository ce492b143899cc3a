import { providerModule } from "../module";
import { geminiTemplateView } from "./template-view";
import { GEMINI_UPSTREAM, geminiAction, geminiAdapter } from "./adapter";
import { geminiTrajectory } from "./trajectory-line";
import { geminiView, geminiPreview } from "./view";
import { geminiRequestPaths } from "./request-paths";

/**
 * Gemini: `POST models/{model}:generateContent` and `:streamGenerateContent` under `/v1beta/` and `/v1/`
 * (the stable version) through the cached flow; every other call there (`countTokens`, `embedContent`, model lists, files),
 * every call under `/v1alpha/` and the file uploads under `/upload/`, to `GEMINI_BASE_URL` unchanged (its `upstream`).
 * The OpenAI-compatible `POST /v1beta/openai/chat/completions` is cached by ./openai-compat.ts, mounted before these
 * routes; the compat layer's other calls (`/v1beta/openai/models`, `/embeddings`) are relayed here.
 */
export const gemini = providerModule(geminiAdapter, {
  format: geminiTrajectory,
  routes: {
    // `/v1alpha/` (Google's preview version: google-genai's `api_version="v1alpha"`) is relayed, not cached.
    paths: ["/v1beta/*", "/v1alpha/*", "/v1/models/*"],
    isCached: (url) => geminiAction(url) !== null,
    passThrough: {
      // `/upload/`: google-genai's `files.upload` starts a resumable upload there.
      paths: ["/v1/*", "/upload/*"],
      claims: (headers, url) => /^\/(v1beta|v1alpha|upload)\//.test(url.pathname) || isGeminiV1(url, headers),
    },
  },
  // Google's SDKs send the key in x-goog-api-key; REST examples put it in ?key=.
  credentials: { bareKeys: ["x-goog-api-key"], queryKeys: ["key"] },
  upstream: GEMINI_UPSTREAM,
  view: geminiView,
  preview: geminiPreview,
  requestPaths: geminiRequestPaths,
  templateView: geminiTemplateView,
});

/** A Gemini method on a path (`models/{model}:generateContent`, `:countTokens`, `files/{id}:download`): no other API names its methods after a colon. */
const GOOGLE_METHOD = /^\/v1\/[^:]+\/[^/:]+:[A-Za-z]+$/;

/** The routes of the other APIs under `/v1/`: a Google header on them does not make them Gemini's. */
const OTHER_API_ROUTES: ReadonlySet<string> = new Set(["/v1/chat/completions", "/v1/responses", "/v1/messages"]);

/**
 * Whether a `/v1/` request is for Gemini's stable API version: a Google method path, or, on any path but the
 * other APIs' routes and without Anthropic's `anthropic-version`, a request that carries Google's key (the
 * `x-goog-api-key` header, or the `?key=` of Gemini's REST calls, which no other upstream reads, when no
 * `Authorization` says it is another provider's) or its client header (`x-goog-api-client`). Whichever way a request goes, a Google key header never reaches another upstream
 * (src/upstream/forward.ts drops it).
 */
export function isGeminiV1(url: URL, headers: Headers): boolean {
  if (GOOGLE_METHOD.test(url.pathname)) return true;
  if (OTHER_API_ROUTES.has(url.pathname) || headers.has("anthropic-version")) return false;
  return headers.has("x-goog-api-key") || headers.has("x-goog-api-client") || (url.searchParams.has("key") && !headers.has("authorization"));
}
