import { costSaved, type PriceTable } from "../../core/prices";
import type { TreeRecord } from "./schema";
import { tenantParam, type Scope } from "./scope";

/** Savings and hit rate of a set of trees. */
export interface Stats {
  trees: number;
  nodes: number;
  hits: number;
  misses: number;
  bypasses: number;
  /** hits / (hits + misses); bypassed requests never reach the tree. Null before any request. */
  hit_rate: number | null;
  prompt_tokens_saved: number;
  completion_tokens_saved: number;
  /** Estimated from the price table; trees whose model has no price count as 0 and are listed in unpriced_models. */
  cost_saved_usd: number;
  latency_saved_ms: number;
  unpriced_models: string[];
  /** Whether every model counted has a price (false: `cost_saved_usd` leaves some out; the dashboard says "no price"). */
  priced: boolean;
}

export interface TreeStats extends Stats {
  tree_id: string;
  namespace: string;
  model: string;
  last_hit_at: number | null;
}

/** The summed columns of SUMS, each under its own column's name. */
const SUMMED = ["node_count", "hits", "misses", "bypasses", "prompt_tokens_saved", "completion_tokens_saved", "latency_saved_ms"] as const;

const SUMS = `count(*) AS trees, ${SUMMED.map((c) => `coalesce(sum(${c}), 0) AS ${c}`).join(", ")}`;

/** A row of SUMS over some trees (by model, or one tree with its id, namespace and last hit). */
type Row = Pick<TreeRecord, "id" | "namespace" | "model" | "last_hit_at" | (typeof SUMMED)[number]> & { trees: number };

function statsOf(rows: Row[], prices: PriceTable): Stats {
  const total: Stats = {
    trees: 0,
    nodes: 0,
    hits: 0,
    misses: 0,
    bypasses: 0,
    hit_rate: null,
    prompt_tokens_saved: 0,
    completion_tokens_saved: 0,
    cost_saved_usd: 0,
    latency_saved_ms: 0,
    unpriced_models: [],
    priced: true,
  };
  for (const r of rows) {
    total.trees += r.trees;
    total.nodes += r.node_count;
    total.hits += r.hits;
    total.misses += r.misses;
    total.bypasses += r.bypasses;
    total.prompt_tokens_saved += r.prompt_tokens_saved;
    total.completion_tokens_saved += r.completion_tokens_saved;
    total.latency_saved_ms += r.latency_saved_ms;
    const cost = costSaved(prices, r.model, r.prompt_tokens_saved, r.completion_tokens_saved);
    if (cost === null) {
      total.priced = false;
      if (r.prompt_tokens_saved + r.completion_tokens_saved > 0 && !total.unpriced_models.includes(r.model)) total.unpriced_models.push(r.model);
    } else total.cost_saved_usd += cost;
  }
  const decided = total.hits + total.misses;
  total.hit_rate = decided > 0 ? total.hits / decided : null;
  return total;
}

/**
 * Overall stats (one aggregate per model, priced) and per-tree stats for the
 * `limit` trees with the most hits, within a scope (one tenant, or every
 * tenant), over every shard: per-model rows add up, per-tree rows merge.
 */
export async function readStats(
  dbs: readonly D1Database[],
  q: { scope: Scope; treeId?: string; limit: number; prices: PriceTable },
): Promise<{ overall: Stats; trees: TreeStats[] }> {
  const where = `WHERE (?1 IS NULL OR tenant = ?1) AND (?2 IS NULL OR id = ?2)`;
  const perShard = await Promise.all(
    dbs.map((db) =>
      db.batch<Row>([
        db.prepare(`SELECT model, ${SUMS} FROM trees ${where} GROUP BY model`).bind(tenantParam(q.scope), q.treeId ?? null),
        db
          .prepare(`SELECT id, namespace, model, last_hit_at, ${SUMS} FROM trees ${where} GROUP BY id ORDER BY hits DESC, id LIMIT ?3`)
          .bind(tenantParam(q.scope), q.treeId ?? null, q.limit),
      ]),
    ),
  );
  const byModel = perShard.flatMap(([models]) => models.results);
  const byTree = perShard
    .flatMap(([, perTree]) => perTree.results)
    .sort((a, b) => b.hits - a.hits || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .slice(0, q.limit);
  return {
    overall: statsOf(byModel, q.prices),
    trees: byTree.map((r) => ({ ...statsOf([r], q.prices), tree_id: r.id, namespace: r.namespace, model: r.model, last_hit_at: r.last_hit_at })),
  };
}
