import type { MiddlewareHandler } from "hono";
import type { AccessSettings } from "../../config";
import { listed } from "../../core/var-rules";
import type { WorkerEnv } from "../../engine/services";
import { tenantOfRequest } from "../../core/credential";
import { ApiError } from "../../core/errors";
import { CREDENTIALS, PROVIDERS } from "../../providers";
import { envelopeOf, providerOfRequest } from "../routes/envelopes";
import { bearerToken, carriesAdminToken, sameSecret } from "./caller";

/**
 * The Worker credential's header (`WORKER_TOKEN`), like AI Gateway's authenticated gateway: a request sends
 * `muscle-mem-authorization: Bearer <WORKER_TOKEN>` beside its provider key. Every `muscle-mem-*` header
 * stays in the Worker (src/upstream/forward.ts), so the upstream never sees it.
 */
export const WORKER_TOKEN_HEADER = "muscle-mem-authorization";

/** Why a request may not use the Worker, or null when it may: a missing Worker credential, or a tenant off the allow-list. */
export function refusal(access: AccessSettings, headers: Headers, tenant: () => string | null): ApiError | null {
  if (access.workerToken !== "") {
    // `Bearer <token>` as the provider key's own header is read (caller.ts: any case, spaces or a tab), or the bare token.
    const sent = headers.get(WORKER_TOKEN_HEADER)?.trim() ?? "";
    const token = bearerToken(sent) ?? sent;
    if (token === "" || !sameSecret(token, access.workerToken)) {
      return new ApiError("unauthorized", `This Worker needs its own credential: send ${WORKER_TOKEN_HEADER}: Bearer <WORKER_TOKEN>.`, WORKER_TOKEN_HEADER);
    }
  }
  if (access.allowedTenants !== "*") {
    const id = tenant();
    if (id === null)
      return new ApiError("unauthorized", "This Worker serves only the credentials on its allow-list (ALLOWED_TENANTS); the request carries none.");
    if (!listed(access.allowedTenants, id)) return new ApiError("forbidden", "This credential is not on the Worker's allow-list (ALLOWED_TENANTS).");
  }
  return null;
}

/**
 * The gate in front of the model routes (`/v1/*`, `/v1beta/*`): with WORKER_TOKEN or ALLOWED_TENANTS set,
 * strangers are refused before anything is read, parsed or forwarded (401/403 in the route's envelope).
 * Unset, every request passes, as before. A request that sends the admin token as its key is refused
 * always: the Worker would forward it to a provider (a secret meant for the Worker alone).
 */
export function accessGate(): MiddlewareHandler<WorkerEnv> {
  return async (c, next) => {
    const access = c.var.services.config.access;
    const admin = carriesAdminToken(c.req.raw.headers, new URL(c.req.url), c.env.ADMIN_TOKEN, CREDENTIALS)
      ? new ApiError("unauthorized", "This is the Worker's admin token (ADMIN_TOKEN), for /api only: send your provider key to the model routes.")
      : null;
    if (!admin && access.workerToken === "" && access.allowedTenants === "*") return next();
    const error = admin ?? refusal(access, c.req.raw.headers, () => tenantOfRequest(c.req.raw.headers, new URL(c.req.url), false, CREDENTIALS));
    if (!error) return next();
    // In the envelope of the API whose route it is (Anthropic's on /v1/messages, Gemini's on its /v1/ and /v1beta/ calls).
    const provider = providerOfRequest(PROVIDERS, c.req.method, new URL(c.req.url), c.req.raw.headers);
    return provider ? envelopeOf(provider)(error) : error.toResponse();
  };
}
