import type { Context, Hono, Next } from "hono";
import { ApiError } from "../../core/errors";
import { cachedCompletion } from "../../engine/cached-completion";
import { chatTemplates, viewTemplates } from "../../engine/template-hook";
import type { WorkerEnv } from "../../engine/services";
import type { ProviderModule } from "../../providers";
import { upstreamBase } from "../../providers/upstream";
import { relayTo } from "../passthrough";
import { envelopeOf, turnOf, type ErrorEnvelope } from "./envelopes";

type App = Hono<WorkerEnv>;
type Ctx = Context<WorkerEnv>;

/** The provider's cached flow, with the engine's templates where the API is keyed as chat is, or its learned ones where it reads as chat through a view. */
function handlerOf(provider: ProviderModule): (c: Ctx) => Promise<Response> {
  if (provider.withTemplatedAdapter) return provider.withTemplatedAdapter((adapter) => cachedCompletion({ ...adapter, templates: chatTemplates }));
  const view = provider.templateView;
  if (view) return provider.withAdapter((adapter) => cachedCompletion({ ...adapter, templates: viewTemplates(view) }));
  return provider.withAdapter((adapter) => cachedCompletion(adapter));
}

/** One of the provider's other calls, relayed unchanged to its upstream (the var its entry declares). */
function relayOther(c: Ctx, provider: ProviderModule, envelope: ErrorEnvelope): Promise<Response> {
  const { base, baseVar } = upstreamBase(c.var.services.config, provider.upstream);
  return relayTo(c, base, baseVar, envelope);
}

/** Mounts each provider's cached call on its paths (a POST it accepts), 405s for its other methods, or its other calls there. */
export function mountCachedRoutes(app: App, providers: readonly ProviderModule[]): void {
  for (const provider of providers) {
    const cached = handlerOf(provider);
    const envelope = envelopeOf(provider);
    for (const path of provider.routes.paths) {
      app.all(path, async (c, next: Next) => {
        const turn = turnOf(provider.routes, c.req.method, new URL(c.req.url), c.req.raw.headers);
        if (turn === "cached") return cached(c);
        if (turn === "not-allowed") return envelope(new ApiError("method_not_allowed", `Use POST for ${path}.`), { allow: "POST" });
        if (turn === "relay") return relayOther(c, provider, envelope);
        return next();
      });
    }
  }
}

/** Mounts each provider's pass-through for its other calls outside its own paths (Anthropic's `/v1/*` with `anthropic-version`). */
export function mountPassThroughs(app: App, providers: readonly ProviderModule[]): void {
  for (const provider of providers) {
    const passThrough = provider.routes.passThrough;
    if (!passThrough) continue;
    const envelope = envelopeOf(provider);
    for (const path of passThrough.paths) {
      app.use(path, async (c, next) => {
        if (passThrough.claims && !passThrough.claims(c.req.raw.headers, new URL(c.req.url))) return next();
        return relayOther(c, provider, envelope);
      });
    }
  }
}
