import { timingSafeEqual } from "node:crypto";
import { digest, tenantOf } from "../../core/hash";
import { credentialOf, type CredentialReader } from "../../core/credential";
import { CREDENTIALS } from "../../providers";

/** Who is calling the trajectory API: the admin (every tenant) or one tenant (its own trees). */
export type Caller = { admin: true; tenant: string } | { admin: false; tenant: string };

/** `Bearer <token>`, the scheme in any case (RFC 9110), then spaces or tabs (src/core/credential.ts reads it alike). */
const BEARER = /^Bearer[ \t]+(\S.*)$/i;

/** Any scheme, then spaces or tabs, then its token. */
const SCHEMED = /^\S+[ \t]+(\S.*)$/;

/**
 * Compares two secrets in constant time: both are hashed to fixed-length
 * digests first, so neither their content nor their length leaks.
 */
export function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(digest(`secret\u0000${given}`), "hex");
  const b = Buffer.from(digest(`secret\u0000${expected}`), "hex");
  return timingSafeEqual(a, b) && expected.length > 0;
}

/** The token of a `Bearer <token>` authorization value (`BEARER`, trimmed), or null when the value is no bearer credential. */
export function bearerToken(authorization: string): string | null {
  return BEARER.exec(authorization.trim())?.[1]?.trim() ?? null;
}

/**
 * Resolves the caller from the raw `Authorization` header value. A non-admin
 * caller's tenant is derived by the proxy's one rule (src/core/credential.ts):
 * `Bearer <key>` is the tenant of that key however its traffic sent it
 * (`Authorization`, a gateway's or proxy's authorization, `api-key`, `x-api-key`,
 * `x-goog-api-key`, `ocp-apim-subscription-key`, `?key=`), so a key
 * sees the trees its own traffic built.
 * Null when there is no usable bearer credential.
 *
 * @example callerOf("Bearer sk-abc", env.ADMIN_TOKEN) // { admin: false, tenant: "…" }
 */
export function callerOf(authorization: string | undefined | null, adminToken: string | undefined): Caller | null {
  if (!authorization) return null;
  const token = bearerToken(authorization);
  if (!token) return null;
  const tenant = tenantOf(credentialOf(new Headers({ authorization }), undefined, CREDENTIALS));
  if (adminToken && sameSecret(token, adminToken)) return { admin: true, tenant };
  return { admin: false, tenant };
}

/**
 * Whether a request sends the admin token where an upstream would read a key: as the token of an as-sent
 * header (`Authorization`, `Proxy-Authorization`, `cf-aig-authorization`: whole, or after any scheme and spaces
 * or a tab; before 11-28 only `Authorization`, and only after `Bearer` and spaces), a bare key header or a query key (`reader`'s).
 * Each value is compared in constant time.
 */
export function carriesAdminToken(headers: Headers, url: URL, adminToken: string | undefined, reader: CredentialReader): boolean {
  if (!adminToken) return false;
  const sent: string[] = [];
  for (const name of reader.asSent) {
    const value = headers.get(name)?.trim();
    // The whole value, and its token after any scheme (`Bearer`, `Token`, `Key`: an upstream may read either).
    if (value) sent.push(value, SCHEMED.exec(value)?.[1]?.trim() ?? value);
  }
  for (const name of reader.bareKeys) {
    const value = headers.get(name);
    if (value) sent.push(value.trim());
  }
  if (url.search) for (const name of reader.queryKeys) sent.push(...url.searchParams.getAll(name).map((v) => v.trim()));
  let found = false;
  // Every value is compared, whatever an earlier one gave.
  for (const value of sent) found = sameSecret(value, adminToken) || found;
  return found;
}
