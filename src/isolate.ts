import { configOf, type Config } from "./config";
import { logEvent } from "./observability/log-event";
import { coloCache, forgetInColo } from "./store/colo-cache";
import { Counters } from "./store/counters";
import { HotCache } from "./store/hot-cache";
import { sendTallies } from "./store/send-tallies";

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

/**
 * Forgets the answer sets a write changed (a prune, an import): this
 * isolate's memory at once (all of it: cheap, and refilled from the colo or
 * D1), and this colo's Cache API entries for `keys`. Other isolates and colos
 * see the change within HOT_CACHE_TTL_MS and COLO_CACHE_TTL_MS.
 */
export async function forgetAnswers(config: Config, keys: Iterable<string>): Promise<void> {
  isolate(config).hot.clear();
  await forgetInColo(coloCache(config.coloCacheTtlMs), keys);
}

/**
 * Hands this isolate's buffered counters (and recent requests) to each tree's
 * HitTally object off the response path, at most once per flush interval; the
 * objects write D1.
 */
export function scheduleFlush(env: Env, ctx: Pick<ExecutionContext, "waitUntil">): void {
  const config = configOf(env);
  const { counters } = isolate(config);
  if (!counters.due()) return;
  counters.markScheduled();
  ctx.waitUntil(
    new Promise((resolve) => setTimeout(resolve, config.counterFlushMs))
      .then(() => sendTallies(env, counters.drain(), config.tallyFlushMs))
      .catch((error) => logEvent("error", "counter_flush_failed", { error: String(error) })),
  );
}
