import type { ProviderAdapter, ProviderKey } from "../cache/provider";
import type { TemplateView } from "../cache/templates/view";
import type { RequestKey } from "../cache/request-key";
import type { CredentialSources } from "../core/credential";
import type { NodeView, PreviewReader } from "./node-view";
import type { RequestPaths } from "./request-paths";
import type { TrajectoryFormat } from "./trajectory/formats";
import type { UpstreamVar } from "./upstream";

/**
 * Where an API is served. A POST to one of `paths` that `isCached` accepts goes through the cached flow;
 * any other request there goes to `passThrough` (relayed to the provider's `upstream`) when the API has
 * one, else is a 405 when `methodNotAllowed`, else continues to the general `/v1/*` pass-through.
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
  };
}

/**
 * Everything the Worker knows of one provider API, as the registry (./index.ts) lists it: its adapter over
 * the cached flow, its routes, how its trees are exported, imported and shown (`format`, whose `api`
 * is the frame's `muscle-mem:api`), the credentials its clients send and the var of its upstream.
 */
export interface ProviderModule {
  /** A short name for logs and docs (`chat`, `anthropic`, `responses`, `gemini`). */
  readonly name: string;
  readonly format: TrajectoryFormat;
  readonly routes: ProviderRoutes;
  /** The headers (and query parameters) its clients send a key in: every one counts toward every request's tenant. */
  readonly credentials: CredentialSources;
  /** The var that sets its upstream's base URL, and its default. */
  readonly upstream: UpstreamVar;
  /** A stored node (its message column) as the node API's provider-neutral `view`, which the dashboard shows. */
  nodeView(json: string): NodeView;
  /** How its stored messages are previewed in lists (src/store/tree/node-preview.ts). */
  readonly preview: PreviewReader;
  /** How a miss's explanation names a differing field as its requests write it (src/engine/explain/request-paths.ts). */
  readonly requestPaths: RequestPaths;
  /** Hands the adapter, whatever its request, key and answer types, to `use`. */
  withAdapter<R>(use: <B, K extends ProviderKey, A>(adapter: ProviderAdapter<B, K, A>) => R): R;
  /**
   * How the API's stored messages read as chat's (src/cache/templates/view.ts): set when learned templates serve
   * it through that view (its trees' learning reads their messages through it too).
   */
  readonly templateView?: TemplateView;
  /** Set when the API keys its requests as chat's RequestKey: the engine's declared and learned templates then apply. */
  withTemplatedAdapter?<R>(use: <B, A>(adapter: ProviderAdapter<B, RequestKey, A>) => R): R;
}

/** What a provider's folder declares beside its adapter (ProviderModule's fields of the same names). */
export interface ProviderParts {
  readonly format: TrajectoryFormat;
  readonly routes: ProviderRoutes;
  readonly credentials: CredentialSources;
  readonly upstream: UpstreamVar;
  /** The view of a node in the API's shape (`format.nodeMessage`'s output): ProviderModule's `nodeView` reads it. */
  view(message: Record<string, unknown>): NodeView;
  readonly preview: PreviewReader;
  readonly requestPaths: RequestPaths;
  /** How its stored messages read as chat's, when learned templates serve it (ProviderModule's `templateView`). */
  readonly templateView?: TemplateView;
}

/**
 * A registry entry for `adapter` and what its folder declares.
 *
 * @example export const anthropic = providerModule(messagesAdapter, { format, routes, credentials, upstream: ANTHROPIC_UPSTREAM })
 */
export function providerModule<B, K extends ProviderKey, A>(adapter: ProviderAdapter<B, K, A>, parts: ProviderParts): ProviderModule {
  const { view, ...rest } = parts;
  return { name: adapter.name, ...rest, nodeView: (json) => view(parts.format.nodeMessage(json)), withAdapter: (use) => use(adapter) };
}

/** A registry entry for an API keyed as chat is: declared and learned templates serve it too. */
export function templatedProviderModule<B, A>(adapter: ProviderAdapter<B, RequestKey, A>, parts: ProviderParts): ProviderModule {
  return { ...providerModule(adapter, parts), withTemplatedAdapter: (use) => use(adapter) };
}
