import type { WranglerDev } from "../test/support/wrangler-dev";
import type { ChatBody } from "../tools/scripted-model";
import { perRequest } from "./hit-classes";
import { post } from "./http";
import { addStoreCounts, noStoreCounts, type StoreCounts } from "./load";
import { caseBodies, FULL_MISS_MARK, learnedBodies, refundCases, treeHeaders, warmTree } from "./template-trees";

/** Store calls per request in a tree with live learned templates, from `server-timing` (the capacity model's template inputs). */
export interface TemplateCosts {
  /** Exact misses a learned template served: the exact lookup, then the learned-template lookup (responses 0: none was learned). */
  learnedHit: ReturnType<typeof perRequest>;
  /** Misses no template serves in that tree: the exact lookup, the learned-template lookup, then the claim. */
  fullMiss: ReturnType<typeof perRequest>;
  /** How many of the fresh requests the learned templates served. */
  learnedBodies: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Warms one tree with template induction on (the refund desk of the template
 * rows) and gives it one live template no request can use (so that the tree
 * has live templates whatever its learners made of the warm-up), waits for
 * requests its learned templates serve, then, after both TTLs lapsed, sends
 * each learned request once and `fullMisses` requests no template can serve,
 * one at a time, summing each response's `server-timing` store counts. Each
 * response is checked for the outcome it stands for (`hit` +
 * `muscle-mem-template`; `miss`). None learned: `learnedHit` has 0 responses.
 */
export async function templateCosts(dev: WranglerDev, ttl: { hotMs: number; coloMs: number }, fullMisses = 10): Promise<TemplateCosts> {
  const namespace = `tpl-cost-${Date.now().toString(36)}`;
  const warm = refundCases(11, 8, true).flatMap(caseBodies);
  const treeId = await warmTree(dev, namespace, warm, true);
  const now = Date.now();
  await dev.sql(
    `INSERT INTO templates (id, tree_id, lookup_key, anchor_depth, pattern, state, created_at, updated_at) VALUES ('tpl-cost-${now}', '${treeId}', 'nothing-${now}', 0, '{}', '{}', ${now}, ${now})`,
  );
  const learned = await learnedBodies(dev, [namespace], refundCases(22, 16, false).flatMap(caseBodies), 15_000);
  await sleep(ttl.coloMs + ttl.hotMs + 500);
  const hit = noStoreCounts();
  for (const body of learned) {
    const res = await post(dev.url, body, treeHeaders(namespace));
    await res.arrayBuffer();
    if (res.headers.get("muscle-mem-cache") !== "hit" || !res.headers.get("muscle-mem-template"))
      throw new Error(`template costs: a learned request was a ${res.headers.get("muscle-mem-cache")} without a template`);
    addStoreCounts(hit, res.headers.get("server-timing"));
  }
  const miss: StoreCounts = noStoreCounts();
  const base: ChatBody = learned[0] ?? warm[0];
  for (let i = 0; i < fullMisses; i++) {
    const body = { ...base, messages: [...base.messages, { role: "user", content: `Also, one more question ${FULL_MISS_MARK} ${namespace} ${i}.` }] };
    const res = await post(dev.url, body, treeHeaders(namespace));
    await res.arrayBuffer();
    if (res.headers.get("muscle-mem-cache") !== "miss") throw new Error(`template costs: a full miss was a ${res.headers.get("muscle-mem-cache")}`);
    addStoreCounts(miss, res.headers.get("server-timing"));
  }
  return { learnedHit: perRequest(hit), fullMiss: perRequest(miss), learnedBodies: learned.length };
}
