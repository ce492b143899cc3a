import type { MiddlewareHandler } from "hono";
import { ApiError } from "../../core/errors";
import { callerOf, type Caller } from "./caller";

/** Hono variables set by `requireCaller`. */
export interface AuthVariables {
  caller: Caller;
}

/**
 * Rejects requests without a bearer credential (401 in the error envelope)
 * and stores the resolved caller in `c.var.caller`.
 */
export function requireCaller(): MiddlewareHandler<{ Bindings: Env; Variables: AuthVariables }> {
  return async (c, next) => {
    const caller = callerOf(c.req.header("authorization"), c.env.ADMIN_TOKEN);
    // No Authorization header, another scheme, or an empty token
    if (!caller) throw new ApiError("unauthorized", "Send Authorization: Bearer <ADMIN_TOKEN or your upstream API key>.");
    c.set("caller", caller);
    await next();
  };
}
