import type { MiddlewareHandler } from "hono";
import { ApiError } from "../../core/errors";
import { keyAccepted, keyCheckTarget } from "../../engine/key-freshness";
import type { ServiceVariables } from "../../engine/services";
import { refusal } from "./access";
import { bearerToken, callerOf, type Caller } from "./caller";

/** Hono variables set by `requireCaller`, beside the services every request carries (src/http/services.ts). */
export interface AuthVariables extends ServiceVariables {
  caller: Caller;
}

/**
 * Rejects requests without a bearer credential (401 in the error envelope)
 * and stores the resolved caller in `c.var.caller`. The admin token passes as
 * it is. A tenant key passes the Worker's access rules (WORKER_TOKEN,
 * ALLOWED_TENANTS: src/http/auth/access.ts), and only while its provider
 * accepted it within KEY_FRESH_MS (src/engine/key-freshness.ts: its last
 * successful call through the Worker, else one model-list call at the
 * provider the key belongs to, `keyCheckTarget`), so that a revoked key
 * stops reading its tenant's recordings.
 */
export function requireCaller(): MiddlewareHandler<{ Bindings: Env; Variables: AuthVariables }> {
  return async (c, next) => {
    const caller = callerOf(c.req.header("authorization"), c.env.ADMIN_TOKEN);
    // No Authorization header, another scheme, or an empty token
    if (!caller) throw new ApiError("unauthorized", "Send Authorization: Bearer <ADMIN_TOKEN or your upstream API key>.");
    if (!caller.admin) {
      const { config } = c.var.services;
      const refused = refusal(config.access, c.req.raw.headers, () => caller.tenant);
      if (refused) throw refused;
      const authorization = c.req.header("authorization") ?? "";
      const key = bearerToken(authorization) ?? authorization.trim();
      if (!(await keyAccepted(c.env.DB, config.access, caller.tenant, { bareKey: (provider) => keyCheckTarget(config, key, provider) }))) {
        throw new ApiError(
          "unauthorized",
          `The provider has not accepted this key within KEY_FRESH_MS (${config.access.keyFreshMs} ms): send one model request with it through the Worker, or use the admin token.`,
        );
      }
    }
    c.set("caller", caller);
    await next();
  };
}
