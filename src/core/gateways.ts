import { digest } from "./hash";

/**
 * What the AI gateways people put in front of a model read from a request's headers (docs/compat.md,
 * "Gateways"). A leaf module: credential.ts counts the credentials, upstream-frame.ts keys the routes.
 */

/**
 * Headers that carry a gateway's credential: whose account (and so whose provider keys, configs and
 * deployments) answers. Each joins the tenant as `name: value`, so two users behind one gateway who send the
 * same placeholder `Authorization` never share a tenant. Portkey: its API key, a virtual key (a stored
 * provider key), AWS, Vertex, Azure Entra and Oracle secrets; Helicone: `Helicone-Auth`; LiteLLM proxy: `x-litellm-api-key`;
 * Cloudflare Access in front of a self-hosted model: a service token (`cf-access-client-id` and `-secret`) or a token
 * (`cf-access-token`), whose holders may all send the same placeholder `Authorization`; Kong (its AI Gateway's
 * key-auth consumers): `apikey`; Gravitee: `x-gravitee-api-key`. (A session cookie counts too: `sessionCookies`.)
 * (OpenRouter reads `Authorization`; Cloudflare AI Gateway `cf-aig-authorization`: both counted as sent.)
 */
export const GATEWAY_CREDENTIAL_HEADERS = [
  "x-portkey-api-key",
  "x-portkey-virtual-key",
  "x-portkey-aws-secret-access-key",
  "x-portkey-aws-access-key-id",
  "x-portkey-aws-session-token",
  "x-portkey-vertex-service-account-json",
  "x-portkey-azure-entra-client-secret",
  "x-portkey-oracle-private-key",
  // A config may hold the provider key itself (`api_key`, what Portkey's open-source gateway reads): it is keyed
  // below too, and here splits the tenant, so that a shared placeholder Authorization never lists its trees.
  "x-portkey-config",
  "helicone-auth",
  "x-litellm-api-key",
  "cf-access-client-id",
  "cf-access-client-secret",
  "cf-access-token",
  "apikey",
  // Gravitee's API-key plan (its query form, `?api-key=`, is a query key: src/core/credential.ts).
  "x-gravitee-api-key",
] as const;

/**
 * Cloudflare's own cookies (bot management, rate limiting, load balancing, waiting room, challenge
 * clearance): set by the edge in front of the Worker, they rotate and name no caller, so they never split a tenant.
 */
const EDGE_COOKIES: ReadonlySet<string> = new Set(["__cf_bm", "_cfuvid", "cf_clearance", "__cflb", "__cfruid", "__cfwaitingroom", "cf_ob_info", "cf_use_ob"]);

/**
 * The cookies of a `Cookie` header that may name the caller, as sent (their order kept: an upstream may read the
 * first of two of one name): every pair but Cloudflare's edge cookies; null when none is left. An upstream, or
 * Cloudflare Access (`CF_Authorization`) or an OAuth proxy (`_oauth2_proxy`) in front of a self-hosted model,
 * may read one as the caller's session, so they join the tenant (src/core/credential.ts). Before 11-28 the
 * header was forwarded but not counted, and two Access sessions behind one placeholder `Authorization` shared
 * a tenant (test/unit/credential.scheme.test.ts).
 *
 * @example sessionCookies("__cf_bm=x; CF_Authorization=jwt") // "CF_Authorization=jwt"
 */
export function sessionCookies(cookie: string | null): string | null {
  if (!cookie) return null;
  const kept = cookie
    .split(";")
    .map((pair) => pair.trim())
    .filter((pair) => {
      const name = pair.split("=", 1)[0].trim();
      return pair !== "" && !EDGE_COOKIES.has(name) && !name.startsWith("__cfseq-");
    });
  return kept.length === 0 ? null : kept.join("; ");
}

/**
 * Headers that route a request to a provider, a deployment or a model, or change what the provider reads:
 * two values may be answered by two models, so each is keyed (in the frame, as its name and a digest of the
 * value: a Portkey config may hold a provider key, and a raw key is never stored). Portkey: the config (an id
 * or inline JSON), the provider, a custom host, Azure, AWS, SageMaker, Vertex, Workers AI and Oracle deployment,
 * account and identity settings, the OpenAI project and organisation, the Anthropic beta and version, strict
 * OpenAI compliance, the client headers it forwards; Helicone: the target URL, the
 * OpenAI API base, the target provider and fallbacks; LiteLLM proxy: tag routing and the forwarded Anthropic
 * beta (`x-pass-…`).
 */
export const GATEWAY_ROUTING_HEADERS = [
  "x-portkey-config",
  "x-portkey-provider",
  "x-portkey-custom-host",
  "x-portkey-azure-resource-name",
  "x-portkey-azure-deployment-id",
  "x-portkey-azure-api-version",
  "x-portkey-azure-model-name",
  "x-portkey-aws-region",
  "x-portkey-vertex-project-id",
  "x-portkey-vertex-region",
  "x-portkey-openai-project",
  "x-portkey-openai-organization",
  "x-portkey-anthropic-beta",
  "x-portkey-anthropic-version",
  "x-portkey-strict-open-ai-compliance",
  // The rest of the Portkey gateway's own header list (PORTKEY_HEADER_KEYS) that picks a deployment, a model, an
  // account or identity, or which client headers reach the provider.
  "x-portkey-azure-deployment-name",
  "x-portkey-azure-region",
  "x-portkey-azure-endpoint-name",
  "x-portkey-azure-deployment-type",
  "x-portkey-azure-foundry-url",
  "x-portkey-azure-auth-mode",
  "x-portkey-azure-managed-client-id",
  "x-portkey-azure-entra-tenant-id",
  "x-portkey-azure-entra-client-id",
  "x-portkey-aws-auth-type",
  "x-portkey-aws-role-arn",
  "x-portkey-aws-external-id",
  "x-portkey-amzn-sagemaker-target-model",
  "x-portkey-amzn-sagemaker-target-variant",
  "x-portkey-amzn-sagemaker-target-container-hostname",
  "x-portkey-amzn-sagemaker-inference-component",
  "x-portkey-amzn-sagemaker-model-name",
  "x-portkey-amzn-sagemaker-custom-attributes",
  "x-portkey-amzn-sagemaker-enable-explanations",
  "x-portkey-amzn-sagemaker-session-id",
  "x-portkey-vertex-auth-type",
  "x-portkey-workers-ai-account-id",
  "x-portkey-oracle-region",
  "x-portkey-oracle-version",
  "x-portkey-oracle-compartment-id",
  "x-portkey-oracle-tenancy",
  "x-portkey-oracle-fingerprint",
  "x-portkey-oracle-user",
  "x-portkey-forward-headers",
  "helicone-target-url",
  "helicone-openai-api-base",
  "helicone-target-provider",
  "helicone-fallbacks",
  "x-litellm-tags",
  "x-pass-anthropic-beta",
] as const;

/** The frame key of the gateway routing headers a request sends. */
export const GATEWAY_KEY = "muscle-mem:gateway";

/**
 * The keyed form of the routing headers `headers` sends: `name#digest` each, in the list's order; empty
 * when it sends none (so a request without a gateway keys the tree it always did). Read with `get` only,
 * one name at a time, so that the request memo sees every header keying read.
 *
 * @example gatewayRoutesOf(new Headers({ "x-portkey-provider": "openai" })) // ["x-portkey-provider#<digest>"]
 */
export function gatewayRoutesOf(headers: Headers | undefined): string[] {
  const out: string[] = [];
  if (!headers) return out;
  for (const name of GATEWAY_ROUTING_HEADERS) {
    const value = headers.get(name);
    if (value !== null && value !== "") out.push(`${name}#${digest(`gateway\u0000${name}\u0000${value}`)}`);
  }
  return out;
}
