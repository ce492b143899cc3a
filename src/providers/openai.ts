import type { CredentialSources } from "../core/credential";
import type { UpstreamVar } from "./upstream";

/**
 * What OpenAI's two APIs (chat, responses) and the general `/v1/*` pass-through share: one upstream, and the
 * credentials OpenAI's and Azure OpenAI's clients send (`Authorization`, `api-key`).
 */
export const OPENAI_UPSTREAM: UpstreamVar = {
  name: "UPSTREAM_BASE_URL",
  fallback: "https://api.openai.com/v1",
  keyCheck: { id: "openai", pathname: "/v1/models", headers: (key) => new Headers({ authorization: `Bearer ${key}` }) },
};

export const OPENAI_CREDENTIALS: CredentialSources = { asSent: ["authorization"], bareKeys: ["api-key"] };
