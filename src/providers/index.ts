import type { TemplateView } from "../cache/templates/view";
import { credentialReader, GENERAL_CREDENTIALS, type CredentialReader } from "../core/credential";
import { frameApi } from "../core/protocol";
import { anthropic } from "./anthropic";
import { chat } from "./chat";
import { gemini } from "./gemini";
import { geminiOpenAI } from "./gemini/openai-compat";
import type { ProviderModule } from "./module";
import { OPENAI_UPSTREAM } from "./openai";
import { responses } from "./responses";
import type { UpstreamVar } from "./upstream";

export type { ProviderModule };

/**
 * The registry: every provider API the Worker caches, one line each. The export, the import and the node
 * view find a tree's provider here by its frame's `muscle-mem:api` (chat trees have none). A fifth API is
 * a folder beside these and one line here (docs/architecture.md, "How to add a provider"). Gemini's
 * OpenAI-compatible chat route (chat's adapter on Gemini's upstream) comes before Gemini, whose `/v1beta/*` it is under.
 */
export const PROVIDERS: readonly ProviderModule[] = [chat, anthropic, responses, geminiOpenAI, gemini];

/**
 * Every header and query parameter any provider's clients (or a proxy or gateway before them) send a key in:
 * a request's tenant reads them all, whichever route it took (src/core/credential.ts).
 */
export const CREDENTIALS: CredentialReader = credentialReader([GENERAL_CREDENTIALS, ...PROVIDERS.map((p) => p.credentials)]);

/** The provider whose trees' frames name `api` (`muscle-mem:api`; null or absent: chat), or undefined for an API no provider has. */
export function providerOfApi(api: unknown): ProviderModule | undefined {
  if (api === null || api === undefined) return chat;
  return typeof api === "string" ? PROVIDERS.find((p) => p.format.api === api) : undefined;
}

/** The provider whose trees' frames name `api`, or chat's for an API no provider has (read as chat, never refused). */
export function providerOfApiOrChat(api: unknown): ProviderModule {
  return providerOfApi(api) ?? chat;
}

/** Every upstream a provider declares, once each (chat and responses share OpenAI's). */
export const UPSTREAMS: readonly UpstreamVar[] = [...new Map(PROVIDERS.map((p) => [p.upstream.name, p.upstream])).values()];

/** The upstream a credential of unknown provider goes to: the general `/v1/*` pass-through's (OpenAI's). */
export const DEFAULT_UPSTREAM: UpstreamVar = OPENAI_UPSTREAM;

/** The template view of the API a tree's frame names (src/cache/templates/view.ts), or null: a chat tree, or an API templates do not read. */
export function templateViewOfFrame(frameJson: string): TemplateView | null {
  const api = frameApi(frameJson);
  return api === null ? null : (providerOfApi(api)?.templateView ?? null);
}
