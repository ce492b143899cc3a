import type { StoredAnswer } from "../../core/answer";
import type { ColoCache } from "./colo-cache";
import type { HotCache } from "./isolate-cache";

/**
 * Keeps answers read from the store at `readAt` in this isolate's memory and
 * the colo layer, each until `readAt` plus its bound (the colo put runs after
 * the response when `defer` is given, else now). Nothing is kept when the
 * answers are empty, or when a write of this isolate forgot the key since the
 * read began (`HotCache.staleRead`): then they may be stale. The check is made
 * again when the colo put runs. Never throws.
 */
export async function keepRead(
  hot: HotCache,
  colo: ColoCache | null,
  key: string,
  answers: StoredAnswer[],
  readAt: number,
  defer?: (work: Promise<unknown>) => void,
): Promise<void> {
  if (answers.length === 0 || hot.staleRead(key, readAt)) return;
  hot.set(key, answers, Date.now(), colo ? readAt + colo.ttlMs : Infinity, readAt);
  if (!colo) return;
  const put = Promise.resolve()
    .then(() => (hot.staleRead(key, readAt) ? undefined : colo.put(key, answers, readAt)))
    .catch(() => undefined);
  if (defer) defer(put);
  else await put;
}
