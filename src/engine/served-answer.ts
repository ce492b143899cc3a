import type { ChainBase, ProviderKey, ServedAnswer } from "../cache/provider";
import { logEvent } from "../observability/log-event";
import { keepServedAnswer } from "../store/tree/served-answers";
import { withTimeout } from "./lookup/read-through";

/** The template miss reason when a template's answer could not be kept for chaining: the request went to the model. */
export const UNKEPT_TEMPLATE = "a template's answer could not be kept for previous_response_id (the write failed or timed out): the request went to the model";

/** The row kept for a template's answer served to `key`: its steps after `chain.base` (all of them when the base is not on its path). Pure. */
export function keptRowOf(key: ProviderKey, chain: ChainBase, answerHash: string, message: unknown): ServedAnswer {
  const from = key.path.findIndex((step) => step.hash === chain.base);
  return {
    treeId: key.treeId,
    answerHash,
    parent: key.key,
    base: from < 0 ? key.treeId : chain.base,
    tail: key.path.slice(from + 1).map((step) => ({ hash: step.hash, message: step.json })),
    answer: JSON.stringify(message),
    links: from < 0 ? 0 : chain.links,
  };
}

/**
 * Keeps a learned template's answer (`answerHash`, `message` as served) for a request that may chain on its id
 * (`chain`: src/cache/provider.ts), in the tree's shard `db`, before it is served: the conversation after
 * `chain.base` and the answer (src/store/tree/served-answers.ts). False when the write failed or did not end
 * within `timeoutMs` (the answer is then not served: a miss). Never throws.
 */
export async function keptForChaining(
  db: D1Database,
  timeoutMs: number,
  key: ProviderKey,
  chain: ChainBase,
  answerHash: string,
  message: unknown,
): Promise<boolean> {
  try {
    await withTimeout(keepServedAnswer(db, key.tenant, keptRowOf(key, chain, answerHash, message)), timeoutMs, "served answer");
    return true;
  } catch (error) {
    logEvent("error", "served_answer_keep_failed", { tree: key.treeId, error: String(error) });
    return false;
  }
}
