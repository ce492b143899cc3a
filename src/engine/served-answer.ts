import { type ChainBase, MAX_SERVED_LINKS, type ProviderKey, type ServedAnswer } from "../cache/provider";
import { logEvent } from "../observability/log-event";
import { keepServedAnswer, knownSteps } from "../store/tree/served-answers";
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
 * The deepest step of `key`'s path that resolves without it (a recorded node, or a kept answer fewer than
 * MAX_SERVED_LINKS deep), so that a client that sends its whole conversation each time (no
 * `previous_response_id`) keeps only what follows it; the root when none does or the read fails.
 */
async function deepestKnown(db: D1Database, key: ProviderKey): Promise<ChainBase> {
  const root = { base: key.treeId, links: 0 };
  try {
    const known = await knownSteps(
      db,
      key.tenant,
      key.treeId,
      key.path.map((step) => step.hash),
    );
    for (let i = key.path.length - 1; i >= 0; i--) {
      const links = known.get(key.path[i].hash);
      if (links !== undefined && links < MAX_SERVED_LINKS) return { base: key.path[i].hash, links };
    }
  } catch (error) {
    logEvent("warn", "served_answer_base_failed", { tree: key.treeId, error: String(error) });
  }
  return root;
}

/**
 * Keeps a learned template's answer (`answerHash`, `message` as served) for a request that may chain on its id
 * (`chain`: src/cache/provider.ts), in the tree's shard `db`, before it is served: the conversation after
 * `chain.base` (for a request not resolved from an id, after its deepest step that resolves: deepestKnown) and the answer (src/store/tree/served-answers.ts). False when the write failed or did not end
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
  const keep = async () => {
    const base = chain.base === key.treeId ? await deepestKnown(db, key) : chain;
    await keepServedAnswer(db, key.tenant, keptRowOf(key, base, answerHash, message));
  };
  try {
    await withTimeout(keep(), timeoutMs, "served answer");
    return true;
  } catch (error) {
    logEvent("error", "served_answer_keep_failed", { tree: key.treeId, error: String(error) });
    return false;
  }
}
