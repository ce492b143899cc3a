import type { MiddlewareHandler } from "hono";
import { ApiError } from "../../core/errors";
import { keyAccepted } from "../../engine/key-freshness";
import type { ServiceVariables } from "../../engine/services";
import { OPENAI_UPSTREAM } from "../../providers/openai";
import { upstreamBase } from "../../providers/upstream";
import { refusal } from "./access";
import { callerOf, type Caller } from "./caller";

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
 * successful call through the Worker, else one `GET /v1/models` at
 * UPSTREAM_BASE_URL with this request's Authorization), so that a revoked key
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
      const target = {
        ...upstreamBase(config, OPENAI_UPSTREAM),
        pathname: "/v1/models",
        headers: new Headers({ authorization: c.req.header("authorization") ?? "" }),
        url: "http://api.invalid/",
      };
      if (!(await keyAccepted(c.env.DB, config.access, caller.tenant, target))) {
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
