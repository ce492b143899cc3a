import type { MiddlewareHandler } from "hono";
import { servicesOf, type WorkerEnv } from "../engine/services";

/**
 * Hands the isolate's services (config, caches, counters: src/engine/services.ts) to every request as
 * `c.var.services`, built once per isolate. The first middleware: everything after it reads them there.
 *
 * @example app.use("*", provideServices())
 */
export function provideServices(): MiddlewareHandler<WorkerEnv> {
  return async function services(c, next) {
    c.set("services", servicesOf(c.env));
    await next();
  };
}
