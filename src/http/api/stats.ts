import { z } from "zod";
import { HEX32 } from "../../core/protocol";
import { shardFor } from "../../store/shards/directory";
import { shardsToRead } from "../../store/shards/directory-backfill";
import { readStats } from "../../store/tree/stats";
import { limitSchema, notFound, parseWith, scopeOf, type ApiCtx } from "./params";

const statsQuery = z.object({
  tree_id: z.string().regex(HEX32, "must be 32 lowercase hex characters").optional(),
  limit: limitSchema(50, 200),
});

/** `GET /api/stats`: hit rate, tokens, estimated cost and latency saved; overall and per tree. */
export async function getStats(c: ApiCtx): Promise<Response> {
  const q = parseWith(statsQuery, c.req.query());
  const prices = c.var.services.config.prices;
  // One tree: its shard. Else the shards the tree directory names for the caller (every shard until its backfill is done).
  const from = q.tree_id ? [await shardFor(c.env, q.tree_id, { timeoutMs: c.var.services.config.directoryTimeoutMs })] : await shardsToRead(c.env, scopeOf(c));
  const stats = await readStats(
    from.map((s) => s.db),
    { scope: scopeOf(c), treeId: q.tree_id, limit: q.limit, prices },
  );
  if (q.tree_id && stats.trees.length === 0) throw notFound("tree");
  return c.json(stats);
}
