import { Hono } from "hono";
import { ApiError, errorResponse } from "../core/errors";
import { logEvent } from "../observability/log-event";
import { PROVIDERS } from "../providers";
import { apiRoutes } from "./api";
import { observe } from "./observe";
import { passThrough } from "./passthrough";
import { modelOptions } from "./preflight";
import { mountCachedRoutes, mountPassThroughs } from "./routes/providers";
import { envelopeOf, providerOfRequest } from "./routes/envelopes";
import { accessGate } from "./auth/access";
import { noteWorkerOrigin } from "../engine/lookup/colo-cache";
import type { WorkerEnv } from "../engine/services";
import { provideServices } from "./services";

/** The model routes' paths (Gemini's preview version and Google's file uploads among them), behind the access gate. */
const MODEL_PATHS = ["/v1/*", "/v1beta/*", "/v1alpha/*", "/upload/*"] as const;

/** The Worker's routes: each registered provider's cached call and pass-through, the rest of `/v1/*` to the upstream, the API and a health check. */
export function newApp(): Hono<WorkerEnv> {
  const app = new Hono<WorkerEnv>();
  // Config and the isolate's caches, built once per isolate and handed to every request (`c.var.services`).
  app.use("*", provideServices());
  app.use("*", observe());
  // The colo layer keys its Cache API entries on the Worker's own host (src/engine/lookup/colo-cache.ts).
  app.use("*", async (c, next) => {
    noteWorkerOrigin(c.req.url);
    await next();
  });
  app.get("/healthz", (c) => c.json({ ok: true, service: "muscle-mem" }));
  app.all("/healthz", (c) => new ApiError("method_not_allowed", `${c.req.method} is not allowed on /healthz: use GET.`).toResponse({ allow: "GET, HEAD" }));
  // WORKER_TOKEN and ALLOWED_TENANTS keep strangers off the model routes (the API checks them per caller).
  // OPTIONS (a browser's preflight) is the Worker's own answer on every model route, before the gate.
  for (const path of MODEL_PATHS) app.use(path, modelOptions(PROVIDERS));
  for (const path of MODEL_PATHS) app.use(path, accessGate());
  mountCachedRoutes(app, PROVIDERS);
  mountPassThroughs(app, PROVIDERS);
  app.all("/v1/*", passThrough);
  app.route("/api", apiRoutes());
  app.notFound(() => new ApiError("not_found", "No such route.").toResponse());
  app.onError((err, c) => {
    if (!(err instanceof ApiError)) logEvent("error", "unhandled_error", { error: String(err) });
    // In the envelope of the route's own API (Anthropic's, Gemini's), never a stack or an internal name.
    const provider = providerOfRequest(PROVIDERS, c.req.method, new URL(c.req.url), c.req.raw.headers);
    if (!provider) return errorResponse(err);
    return envelopeOf(provider)(err instanceof ApiError ? err : new ApiError("internal_error", "The cache failed unexpectedly."));
  });
  return app;
}
