import { z } from "zod";
import { HEX32 } from "../../core/protocol";
import { nodeOwner } from "../../store/tree/node-read";
import { readSubtree, SUBTREE_MAX_DEPTH } from "../../store/tree/subtree";
import { limitSchema, notFound, parseWith, withQuery } from "./params";
import type { TreeQueryCtx } from "./tree-access";

/** Most nodes one subtree response carries. */
export const SUBTREE_MAX_LIMIT = 2000;

const subtreeSchema = z.object({
  node: z.string().regex(HEX32, "must be 32 lowercase hex characters").optional(),
  depth: z.coerce.number().int().min(1).max(SUBTREE_MAX_DEPTH).default(SUBTREE_MAX_DEPTH),
  limit: limitSchema(500, SUBTREE_MAX_LIMIT),
});

type SubtreeQuery = z.infer<typeof subtreeSchema>;

/** The subtree query, parsed before the tree is read (a bad one is a 400 even for an unknown tree). */
export const subtreeQuery = withQuery((raw) => parseWith(subtreeSchema, raw));

/**
 * `GET /api/trees/:treeId/subtree?node=&depth=&limit=` (behind subtreeQuery and treeAccess):
 * the nodes below `node` (default: the whole tree) down to `depth` levels, breadth-first,
 * at most `limit` of them, as NodeSummary; `truncated` says the limit cut it.
 */
export async function getSubtree(c: TreeQueryCtx<SubtreeQuery>): Promise<Response> {
  const { tree, shard, query } = c.var;
  const start = query.node ?? tree.id;
  if (start !== tree.id && (await nodeOwner(shard.db, start))?.treeId !== tree.id) throw notFound("node in this tree");
  const { data, truncated } = await readSubtree(shard.db, start, query.depth, query.limit);
  return c.json({ tree_id: tree.id, node: query.node ?? null, depth: query.depth, data, truncated });
}
