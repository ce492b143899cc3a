/**
 * The credential a Messages request is tenanted by, written as the
 * `Authorization` header the trajectory API receives (`Bearer <key>`): the
 * Anthropic SDK sends `x-api-key`, other clients `Authorization: Bearer`.
 * Either way one key is one tenant, and `tenantOf()` of this value equals the
 * tenant of `/api` requests that present the same key as a bearer token.
 */
export function anthropicCredential(headers: Headers): string | null {
  const apiKey = headers.get("x-api-key");
  if (apiKey) return `Bearer ${apiKey}`;
  return headers.get("authorization");
}
