import { z } from "zod";
import { forgetAnswers } from "../../engine/isolate";
import { HEX32 } from "../../core/protocol";
import { nodeOwner } from "../../store/tree/node-read";
import { inScope } from "../../store/tree/scope";
import { previewSubtree } from "../../store/prune/prune";
import { pruneStaleTrees, pruneThroughWriter } from "../../store/prune/runner";
import { findInShards } from "../../store/shards/shards";
import { hashParam, notFound, parseBody, scopeOf, type ApiCtx } from "./params";
import { findOwnedTree, ownedTree } from "./tree-access";
import type { Shard } from "../../store/shards/shards";

/** What this isolate and colo forget after a prune: the changed keys' answer sets. */
function forgetFor(c: ApiCtx): (keys: string[]) => Promise<void> {
  const { config } = c.var.services;
  return (keys) => forgetAnswers(config, keys);
}

/**
 * The tree of a node the caller may see (through the one tree check), or a 404 for the node. Another
 * tenant's node is refused on the owner the first read names, before any other store call: an unknown and
 * a foreign node cost the same (server-timing counts the queries: no oracle).
 */
async function ownedNode(c: ApiCtx): Promise<{ hash: string; treeId: string; shard: Shard }> {
  const hash = hashParam(c, "hash");
  const owner = (await findInShards(c.var.services.shards, (db) => nodeOwner(db, hash)))?.value;
  const owned = owner && inScope(scopeOf(c), owner.tenant) ? await findOwnedTree(c, owner.treeId) : null;
  if (!owned) throw notFound("node");
  return { hash, treeId: owned.tree.id, shard: owned.shard };
}

/** `GET /api/nodes/:hash/prune`: what pruning the node would take (nodes, answers, templates), without pruning. */
export async function getNodePrune(c: ApiCtx): Promise<Response> {
  const { hash, treeId, shard } = await ownedNode(c);
  const outcome = await previewSubtree(shard.db, treeId, hash);
  if (!outcome) throw notFound("node");
  return c.json({ tree_id: treeId, dry_run: true, ...outcome });
}

/** `DELETE /api/nodes/:hash`: prunes the node and everything under it. */
export async function deleteNode(c: ApiCtx): Promise<Response> {
  const { hash, treeId } = await ownedNode(c);
  const outcome = await pruneThroughWriter(c.env, { kind: "subtree", treeId, hash }, forgetFor(c));
  if (outcome.nodes === 0) throw notFound("node");
  return c.json({ tree_id: treeId, ...outcome });
}

const staleBody = z
  .strictObject({
    older_than_ms: z
      .number()
      .int()
      .min(0)
      .max(10 * 365 * 24 * 3600 * 1000)
      .optional(),
    min_hits: z.number().int().min(1).max(1_000_000_000).optional(),
    tree_id: z.string().regex(HEX32, "must be 32 lowercase hex characters").optional(),
    dry_run: z.boolean().default(false),
  })
  .refine((b) => b.older_than_ms !== undefined || b.min_hits !== undefined, { message: "give older_than_ms, min_hits or both", path: ["older_than_ms"] });

/** `POST /api/prune`: prunes the paths whose answers are stale; `dry_run` previews. */
export async function postPrune(c: ApiCtx): Promise<Response> {
  const body = await parseBody(c, staleBody);
  const scope = scopeOf(c);
  if (body.tree_id) await ownedTree(c, body.tree_id);
  const criteria = { cutoff: body.older_than_ms === undefined ? null : Date.now() - body.older_than_ms, minHits: body.min_hits ?? null };
  const outcome = await pruneStaleTrees(
    c.env,
    { scope, treeId: body.tree_id, criteria, dryRun: body.dry_run, directoryTimeoutMs: c.var.services.config.directoryTimeoutMs },
    forgetFor(c),
  );
  return c.json({ dry_run: body.dry_run, ...outcome });
}
