import type { Config } from "../config";
import { HitLines, writeHitLines } from "../observability/hit-lines";
import { logEvent } from "../observability/log-event";
import { coloCache, forgetInColo } from "./lookup/colo-cache";
import { Counters } from "./counting/isolate-counters";
import { HotCache } from "./lookup/isolate-cache";
import { forgetChildless } from "./lookup/childless";
import { sendTallies } from "./counting/send-tallies";

/** State one isolate keeps between requests: the hot answer cache, the buffered counters and hit lines. */
export interface IsolateState {
  hot: HotCache;
  counters: Counters;
  hitLines: HitLines;
}

let state: { config: Config; value: IsolateState } | undefined;

/** This isolate's state, built once for its config. */
export function isolate(config: Config): IsolateState {
  if (state?.config === config) return state.value;
  const value = state?.value ?? { hot: new HotCache(config.hotCacheTtlMs), counters: new Counters(), hitLines: new HitLines() };
  if (state && state.config.hotCacheTtlMs !== config.hotCacheTtlMs) value.hot = new HotCache(config.hotCacheTtlMs);
  state = { config, value };
  return value;
}

/**
 * Forgets the answer sets a write changed (a prune, an import): this
 * isolate's memory at once (all of it: cheap, and refilled from the colo or
 * D1; with what it knew to be childless), and this colo's Cache API entries for `keys`. Other isolates and colos
 * see the change within HOT_CACHE_TTL_MS and COLO_CACHE_TTL_MS.
 */
export async function forgetAnswers(config: Config, keys: Iterable<string>): Promise<void> {
  isolate(config).hot.clear();
  forgetChildless();
  await forgetInColo(coloCache(config.coloCacheTtlMs), keys);
}

/**
 * Hands this isolate's buffered counters (and recent requests) to each tree's
 * HitTally object off the response path, at most once per flush interval; the
 * objects write D1. The gathered `hits` log lines are written at the same time.
 */
export function scheduleFlush(env: Env, config: Config, ctx: Pick<ExecutionContext, "waitUntil">): void {
  const { counters, hitLines } = isolate(config);
  if (!counters.due() && !hitLines.due()) return;
  counters.markScheduled();
  hitLines.markScheduled();
  ctx.waitUntil(
    new Promise((resolve) => setTimeout(resolve, config.counterFlushMs))
      .then(() => {
        writeHitLines(hitLines.drain());
        return sendTallies(env, counters.drain(), config.tallyFlushMs);
      })
      .catch((error) => logEvent("error", "counter_flush_failed", { error: String(error) })),
  );
}
