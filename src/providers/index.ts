import { credentialReader, GENERAL_CREDENTIALS, type CredentialReader } from "../core/credential";
import { anthropic } from "./anthropic";
import { chat } from "./chat";
import { gemini } from "./gemini";
import type { ProviderModule } from "./module";
import { responses } from "./responses";

export type { ProviderModule };

/**
 * The registry: every provider API the Worker caches, one line each. The export, the import and the node
 * view find a tree's provider here by its frame's `muscle-mem:api` (chat trees have none). A fifth API is
 * a folder beside these and one line here (docs/architecture.md, "How to add a provider").
 */
export const PROVIDERS: readonly ProviderModule[] = [chat, anthropic, responses, gemini];

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
