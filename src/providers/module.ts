import type { Config } from "../config";
import type { ProviderAdapter, ProviderKey } from "../cache/provider";
import type { RequestKey } from "../cache/request-key";
import type { TrajectoryFormat } from "./trajectory/formats";

/**
 * Where an API is served. A POST to one of `paths` that `isCached` accepts goes through the cached flow;
 * any other request there goes to `passThrough` when the API has one, else is a 405 when
 * `methodNotAllowed`, else continues to the general `/v1/*` pass-through.
 */
export interface ProviderRoutes {
  /** hono paths (`/v1/chat/completions`, `/v1beta/*`). */
  readonly paths: readonly string[];
  /** Whether a POST there is the API's cached call (default: every POST). */
  isCached?(url: URL): boolean;
  /** Whether another method on `paths` is answered 405 (the API has no such call). */
  readonly methodNotAllowed?: boolean;
  /** The API's other calls (count tokens, model lists, batches), relayed unchanged to its upstream. */
  readonly passThrough?: {
    /** hono paths it claims requests on (besides `paths`), only those `claims` accepts. */
    readonly paths: readonly string[];
    claims?(headers: Headers, url: URL): boolean;
    base(config: Config): string;
    /** The var that sets `base`, named in the envelope when the upstream cannot be reached. */
    readonly baseVar: string;
  };
}

/**
 * Everything the Worker knows of one provider API, as the registry (./index.ts) lists it: its adapter over
 * the cached flow, its routes, and how its trees are exported, imported and shown (`format`, whose `api`
 * is the frame's `muscle-mem:api`).
 */
export interface ProviderModule {
  /** A short name for logs and docs (`chat`, `anthropic`, `responses`, `gemini`). */
  readonly name: string;
  readonly format: TrajectoryFormat;
  readonly routes: ProviderRoutes;
  /** Hands the adapter, whatever its request, key and answer types, to `use`. */
  withAdapter<R>(use: <B, K extends ProviderKey, A>(adapter: ProviderAdapter<B, K, A>) => R): R;
  /** Set when the API keys its requests as chat's RequestKey: the engine's declared and learned templates then apply. */
  withTemplatedAdapter?<R>(use: <B, A>(adapter: ProviderAdapter<B, RequestKey, A>) => R): R;
}

/** A registry entry for `adapter`, served at `routes`, its trees in `format`. */
export function providerModule<B, K extends ProviderKey, A>(
  adapter: ProviderAdapter<B, K, A>,
  format: TrajectoryFormat,
  routes: ProviderRoutes,
): ProviderModule {
  return { name: adapter.name, format, routes, withAdapter: (use) => use(adapter) };
}

/** A registry entry for an API keyed as chat is: declared and learned templates serve it too. */
export function templatedProviderModule<B, A>(adapter: ProviderAdapter<B, RequestKey, A>, format: TrajectoryFormat, routes: ProviderRoutes): ProviderModule {
  return { ...providerModule(adapter, format, routes), withTemplatedAdapter: (use) => use(adapter) };
}
