import type { ProviderAdapter, ProviderKey } from "../cache/provider";
import type { TrajectoryFormat } from "./trajectory/formats";

/**
 * Everything the Worker knows of one provider API, as the registry (./index.ts) lists it: its adapter over
 * the cached flow, and how its trees are exported, imported and shown (`format`, whose `api` is the
 * frame's `muscle-mem:api`).
 */
export interface ProviderModule {
  /** A short name for logs and docs (`chat`, `anthropic`, `responses`, `gemini`). */
  readonly name: string;
  readonly format: TrajectoryFormat;
  /** Hands the adapter, whatever its request, key and answer types, to `use`. */
  withAdapter<R>(use: <B, K extends ProviderKey, A>(adapter: ProviderAdapter<B, K, A>) => R): R;
}

/** A registry entry for `adapter` and `format`. */
export function providerModule<B, K extends ProviderKey, A>(adapter: ProviderAdapter<B, K, A>, format: TrajectoryFormat): ProviderModule {
  return { name: adapter.name, format, withAdapter: (use) => use(adapter) };
}
