import type { Config } from "./config";
import { Counters } from "./store/counters";
import { HotCache } from "./store/hot-cache";

/** State one isolate keeps between requests: the hot answer cache and the buffered counters. */
export interface IsolateState {
  hot: HotCache;
  counters: Counters;
}

let state: { config: Config; value: IsolateState } | undefined;

/** This isolate's state, built once for its config. */
export function isolate(config: Config): IsolateState {
  if (state?.config === config) return state.value;
  const value = state?.value ?? { hot: new HotCache(config.hotCacheTtlMs), counters: new Counters() };
  if (state && state.config.hotCacheTtlMs !== config.hotCacheTtlMs) value.hot = new HotCache(config.hotCacheTtlMs);
  state = { config, value };
  return value;
}
