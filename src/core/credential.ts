import { GATEWAY_CREDENTIAL_HEADERS } from "./gateways";
import { tenantOf } from "./hash";
import { BoundedMemo } from "./memo";

/**
 * Headers that carry a credential as sent (scheme and token): the provider's own, an HTTP proxy's, and
 * Cloudflare AI Gateway's (which, with stored provider keys, is the only credential a request carries).
 */
const AUTHORIZATION_HEADERS = ["authorization", "proxy-authorization", "cf-aig-authorization"] as const;

/** Headers that carry a bare API key, as their readers take it: Azure OpenAI, Anthropic, Gemini, Azure API Management. */
const KEY_HEADERS = ["api-key", "x-api-key", "x-goog-api-key", "ocp-apim-subscription-key"] as const;

/**
 * An authorization value that is a scheme and nothing else (`Bearer `, `Basic`: what a client with an unset
 * key sends) carries no credential: counted, every such client would share one tenant.
 */
const SCHEME_ONLY = /^(?:bearer|basic|token|key|apikey)$/i;

/** Characters no header value can carry (CR, LF, NUL): a `?key=` holding one is no credential (never cached). */
const UNHEADERABLE = /[\r\n\0]/;

/** The query parameter Gemini reads a key from (`?key=…`). */
const KEY_PARAM = "key";

/**
 * The upstream credential of a request, the one string its tenant is hashed
 * from; null when it carries none. Every credential the Worker forwards
 * counts, a gateway's or proxy's too: the upstream behind it may answer each
 * key from another account or deployment. `Authorization`,
 * `Proxy-Authorization` and `cf-aig-authorization` count as sent (so the
 * tenant of `Authorization: Bearer sk-x` never changes); a bare key from
 * `api-key`, `x-api-key`, `x-goog-api-key`, `ocp-apim-subscription-key` or
 * `?key=` counts as `Bearer <key>`; a gateway's credential header (Portkey's, Helicone's, LiteLLM's:
 * src/core/gateways.ts) counts as `name: value`,
 * so a key presented to `/api` as a bearer token sees the trees its traffic
 * built whichever header it used. Several different credentials are all kept
 * (sorted, one per line: header values never hold a newline); the same key
 * sent twice counts once. Empty values, and a scheme with no token (`Bearer `), are no credential; a
 * `?key=` with a line break or NUL makes the whole request carry none (so one value never spells several).
 *
 * @example credentialOf(new Headers({ "api-key": "k" }), url) // "Bearer k"
 */
export function credentialOf(headers: Headers, url?: URL): string | null {
  const found = new Set<string>();
  for (const name of AUTHORIZATION_HEADERS) {
    const value = headers.get(name);
    if (value && value.trim() !== "" && !SCHEME_ONLY.test(value.trim())) found.add(value);
  }
  for (const name of KEY_HEADERS) {
    const key = headers.get(name)?.trim();
    if (key) found.add(`Bearer ${key}`);
  }
  // A gateway's account (src/core/gateways.ts): named, so that it never spells a provider key's tenant.
  for (const name of GATEWAY_CREDENTIAL_HEADERS) {
    const value = headers.get(name)?.trim();
    if (value) found.add(`${name}: ${value}`);
  }
  if (url?.search) {
    for (const key of url.searchParams.getAll(KEY_PARAM)) {
      // Credentials are joined by line breaks, which no header value holds: a query key with one could spell several.
      if (UNHEADERABLE.test(key)) return null;
      if (key.trim()) found.add(`Bearer ${key.trim()}`);
    }
  }
  if (found.size === 0) return null;
  return [...found].sort().join("\n");
}

/**
 * The tenant of a request (a hash; the raw key never leaves this module and
 * `tenantOf`), or null when it carries no credential and `anonymous` is off:
 * then it must be passed through and never cached. With `anonymous` on
 * (`CACHE_ANONYMOUS = "on"`), such requests share the anonymous tenant,
 * which no credential hashes to and only the admin sees through `/api`.
 *
 * @example tenantOfRequest(c.req.raw.headers, new URL(c.req.url), config.cacheAnonymous)
 */
export function tenantOfRequest(headers: Headers, url: URL, anonymous: boolean): string | null {
  const credential = credentialOf(headers, url);
  if (credential !== null) return knownTenant(credential);
  return anonymous ? tenantOf(null) : null;
}

/**
 * The tenants of the credentials this isolate has seen, so that a request need not hash its own: kept in
 * this module, as the keys themselves are, and bounded by characters (the oldest go first).
 */
const knownTenants = new BoundedMemo<string>(256 * 1024, (tenant) => tenant.length);

function knownTenant(credential: string): string {
  let tenant = knownTenants.get(credential);
  if (tenant === undefined) {
    tenant = tenantOf(credential);
    knownTenants.set(credential, tenant);
  }
  return tenant;
}

/** Why a request without a credential was not cached (its logged and counted bypass reason). */
export const NO_CREDENTIAL = "no credential";

/**
 * A route's keying outcome, turned into a bypass ("no credential") when the
 * request has no tenant: it is keyed only so that bad input still gets its 4xx.
 *
 * @example const keyed = unlessAnonymous(tenant, keyRequest(body, tenant ?? "", ns, max))
 */
export function unlessAnonymous<K extends { ok: boolean }>(tenant: string | null, keyed: K): K | { ok: false; bypass: string } {
  if (tenant === null && keyed.ok) return { ok: false, bypass: NO_CREDENTIAL };
  return keyed;
}
