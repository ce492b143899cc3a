import { GATEWAY_CREDENTIAL_HEADERS, sessionCookies } from "./gateways";
import { tenantOf } from "./hash";
import { BoundedMemo } from "./memo";

/**
 * Where clients send a credential: headers whose value counts as sent (scheme and token: `Authorization`),
 * headers that carry a bare API key (`x-api-key`), and query parameters that carry one (`?key=`). Each
 * provider declares its own (src/providers/<api>/index.ts); the registry hands their union, with
 * GENERAL_CREDENTIALS, to credentialOf, so a request's tenant never depends on which route it took.
 */
export interface CredentialSources {
  readonly asSent?: readonly string[];
  readonly bareKeys?: readonly string[];
  readonly queryKeys?: readonly string[];
}

/** The union of some CredentialSources, lowercase and deduplicated: what credentialOf reads. */
export interface CredentialReader {
  readonly asSent: readonly string[];
  readonly bareKeys: readonly string[];
  readonly queryKeys: readonly string[];
}

/**
 * The credentials no provider owns: `Authorization` (also the `/api`'s bearer key), an HTTP proxy's, Cloudflare
 * AI Gateway's (which, with stored provider keys, is the only credential a request carries) and Azure API
 * Management's subscription key, in its header or its `subscription-key` query parameter (one key either way);
 * an API gateway's consumer key in the query: `apikey` (Kong key-auth's default, Apigee's convention) and
 * `api-key` (Gravitee's), counted since 11-28 (before, every consumer behind one placeholder `Authorization`
 * shared its tenant, whose `/api` listed their trees: test/worker/tenant-hunt2.test.ts).
 */
export const GENERAL_CREDENTIALS: CredentialSources = {
  asSent: ["authorization", "proxy-authorization", "cf-aig-authorization"],
  bareKeys: ["ocp-apim-subscription-key"],
  queryKeys: ["subscription-key", "apikey", "api-key"],
};

/**
 * The union of `sources`, each name once, lowercase (the order is irrelevant: credentialOf sorts what it finds).
 *
 * @example credentialReader([GENERAL_CREDENTIALS, { bareKeys: ["x-api-key"] }]).bareKeys // ["ocp-apim-subscription-key", "x-api-key"]
 */
export function credentialReader(sources: readonly CredentialSources[]): CredentialReader {
  const union = (pick: (s: CredentialSources) => readonly string[] | undefined) => [
    ...new Set(sources.flatMap((s) => (pick(s) ?? []).map((n) => n.toLowerCase()))),
  ];
  return { asSent: union((s) => s.asSent), bareKeys: union((s) => s.bareKeys), queryKeys: union((s) => s.queryKeys) };
}

/**
 * An authorization value that is a scheme and nothing else (`Bearer `, `Basic`: what a client with an unset
 * key sends) carries no credential: counted, every such client would share one tenant.
 */
const SCHEME_ONLY = /^(?:bearer|basic|token|key|apikey)$/i;

/** An authorization value's scheme, the spaces or tabs after it, and the rest (its token, as sent). */
const SCHEME_AND_TOKEN = /^(\S+)[ \t]+(\S[\s\S]*)$/;

/**
 * An `asSent` value as one credential: the scheme `bearer` in any case is `Bearer` (RFC 9110: a scheme is
 * case-insensitive), and the run of spaces or tabs after any scheme one space, so that `bearer sk-x` and
 * `Bearer  sk-x` are the tenant of `Bearer sk-x` (before 11-28 each was a tenant of its own). The token is kept
 * exactly as sent: only the spelling of one credential is made one, never two credentials. Other schemes keep
 * their case (`Basic`, `token`: their tenants do not move). What is forwarded is what the client sent.
 *
 * @example asSentCredential("bearer  sk-x") // "Bearer sk-x"
 */
function asSentCredential(value: string): string {
  const parts = SCHEME_AND_TOKEN.exec(value);
  if (!parts) return value;
  const scheme = parts[1].toLowerCase() === "bearer" ? "Bearer" : parts[1];
  return `${scheme} ${parts[2]}`;
}

/** Characters no header value can carry (CR, LF, NUL): a `?key=` holding one is no credential (never cached). */
const UNHEADERABLE = /[\r\n\0]/;

/**
 * The upstream credential of a request, the one string its tenant is hashed
 * from; null when it carries none. Every credential the Worker forwards
 * counts, a gateway's or proxy's too: the upstream behind it may answer each
 * key from another account or deployment. The `asSent` headers of `reader`
 * (`Authorization`, `Proxy-Authorization`, `cf-aig-authorization`) count as sent (so the
 * tenant of `Authorization: Bearer sk-x` never changes), but for the case of a `bearer` scheme and the spacing
 * after a scheme (`asSentCredential`: `bearer  sk-x` is `Bearer sk-x`); a bare key from a
 * `bareKeys` header (`api-key`, `x-api-key`, `x-goog-api-key`, `ocp-apim-subscription-key`) or a
 * `queryKeys` parameter (`?key=`, `?subscription-key=`) counts as `Bearer <key>`; a gateway's credential header (Portkey's, Helicone's, LiteLLM's:
 * src/core/gateways.ts) counts as `name: value`,
 * so a key presented to `/api` as a bearer token sees the trees its traffic
 * built whichever header it used. Several different credentials are all kept
 * (sorted, one per line: header values never hold a newline); the same key
 * sent twice counts once. Empty values, and a scheme with no token (`Bearer `), are no credential; a
 * `?key=` with a line break or NUL makes the whole request carry none (so one value never spells several).
 *
 * @example credentialOf(new Headers({ "api-key": "k" }), url, CREDENTIALS) // "Bearer k"
 */
export function credentialOf(headers: Headers, url: URL | undefined, reader: CredentialReader): string | null {
  const read = readCredential(headers, url, reader);
  return read === REFUSED ? null : read;
}

/** A request whose `?key=` cannot be one credential: it carries none the cache may key, and is never anonymous either. */
const REFUSED = Symbol("refused credential");

function readCredential(headers: Headers, url: URL | undefined, reader: CredentialReader): string | null | typeof REFUSED {
  const found = new Set<string>();
  for (const name of reader.asSent) {
    // As Headers gives it (HTTP whitespace trimmed), never JS-trimmed: a token's trailing U+00A0 is the token's.
    const value = headers.get(name);
    if (value && value.trim() !== "" && !SCHEME_ONLY.test(value.trim())) found.add(asSentCredential(value));
  }
  for (const name of reader.bareKeys) {
    const key = headers.get(name)?.trim();
    if (key) found.add(`Bearer ${key}`);
  }
  // A gateway's account (src/core/gateways.ts): named, so that it never spells a provider key's tenant.
  for (const name of GATEWAY_CREDENTIAL_HEADERS) {
    const value = headers.get(name)?.trim();
    if (value) found.add(`${name}: ${value}`);
  }
  const session = sessionCookies(headers.get("cookie"));
  if (session) found.add(`cookie: ${session}`);
  if (url?.search) {
    for (const param of reader.queryKeys) {
      for (const key of url.searchParams.getAll(param)) {
        // Credentials are joined by line breaks, which no header value holds: a query key with one could spell several.
        if (UNHEADERABLE.test(key)) return REFUSED;
        if (key.trim()) found.add(`Bearer ${key.trim()}`);
      }
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
 * which no credential hashes to and only the admin sees through `/api`. A
 * request whose `?key=` cannot be one credential is null either way: it may
 * carry a key the upstream reads (its answer is that key's), so it is never
 * anonymous.
 *
 * @example tenantOfRequest(c.req.raw.headers, new URL(c.req.url), config.cacheAnonymous, CREDENTIALS)
 */
export function tenantOfRequest(headers: Headers, url: URL, anonymous: boolean, reader: CredentialReader): string | null {
  const credential = readCredential(headers, url, reader);
  if (credential === REFUSED) return null;
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

/** Credential values shorter than this are not scrubbed from text (a placeholder such as `x` would mangle it). */
const SCRUB_MIN = 6;

/**
 * `text` with every credential value `headers` and `url` carry replaced by `[credential]`: each `asSent`
 * value and its token (`Bearer sk-x`, `sk-x`), bare key, gateway value (and each cookie's value) and query
 * key, as `reader` reads them.
 * What the Worker keeps of a message an upstream wrote (an error that quotes the key it refused) never holds
 * a raw key.
 *
 * @example withoutCredentials("bad key sk-abcdef", new Headers({ authorization: "Bearer sk-abcdef" }), undefined, CREDENTIALS) // "bad key [credential]"
 */
export function withoutCredentials(text: string, headers: Headers, url: URL | undefined, reader: CredentialReader): string {
  const values = new Set<string>();
  const add = (value: string | null | undefined) => {
    const v = value?.trim();
    if (v && v.length >= SCRUB_MIN) values.add(v);
  };
  for (const name of reader.asSent) {
    const value = headers.get(name);
    add(value);
    add(value?.trim().replace(/^\S+\s+/, ""));
  }
  for (const name of [...reader.bareKeys, ...GATEWAY_CREDENTIAL_HEADERS, "cookie"]) add(headers.get(name));
  // A cookie's values one by one too: an upstream that refuses a session quotes its value, not the whole header.
  for (const pair of headers.get("cookie")?.split(";") ?? []) add(pair.slice(pair.indexOf("=") + 1));
  if (url?.search) for (const param of reader.queryKeys) for (const key of url.searchParams.getAll(param)) add(key);
  let out = text;
  // Longest first, so that a token inside a longer value (`sk-x` in `Bearer sk-x`) never leaves the rest behind.
  for (const value of [...values].sort((a, b) => b.length - a.length)) out = out.split(value).join("[credential]");
  return out;
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
