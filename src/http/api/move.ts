import { z } from "zod";
import { ApiError } from "../../core/errors";
import { forgetShard } from "../../store/shards/directory";
import type { MoveResult } from "../../store/shards/move";
import { treeWriterOf } from "../../store/objects/tree-objects";
import { hashParam, notFound, parseBody, type ApiCtx } from "./params";

const moveBody = z.strictObject({
  to: z.string().regex(/^[A-Z_][A-Z0-9_]{0,63}$/, "must be a D1 binding name from D1_SHARDS"),
});

/**
 * `POST /api/trees/:treeId/move` (admin): moves a tree to the shard `to`
 * through its writer object (src/store/shards/move.ts), which holds the tree's
 * writes while it copies, switches the directory, then deletes the old rows
 * while the tree's writes go on in the new shard; it answers when the old
 * rows are gone. 404 for an unknown tree, 409 when it is already there or
 * being moved.
 */
export async function postMove(c: ApiCtx): Promise<Response> {
  if (!c.var.caller.admin) throw new ApiError("forbidden", "Moving a tree between shards needs the admin token.");
  const treeId = hashParam(c, "treeId");
  const body = await parseBody(c, moveBody, 'a JSON object: {"to": "<binding>"}');
  if (!c.var.services.shards.some((s) => s.name === body.to)) throw new ApiError("invalid_request", `to: '${body.to}' is not one of D1_SHARDS.`, "to");
  // SAFETY: RPC types the result as a stub; MoveResult is plain data (names and counts).
  const result = (await treeWriterOf(c.env, treeId).move(treeId, body.to)) as MoveResult;
  forgetShard(treeId);
  if (!result.ok) {
    if (result.status === 404) throw notFound("tree");
    throw new ApiError("conflict", result.message);
  }
  const { ok: _, ...moved } = result;
  return c.json(moved);
}
