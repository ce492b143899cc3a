import type { Context, MiddlewareHandler } from "hono";
import type { AuthVariables } from "../auth/middleware";
import { shardFor } from "../../store/shards/directory";
import type { Shard } from "../../store/shards/shards";
import { readTree } from "../../store/tree/tree-list";
import { hashParam, notFound, scopeOf, type QueryVariables } from "./params";

/**
 * The one "may this caller see this tree" check of the trajectory API.
 *
 * The tree is read once, from the shard the directory names, with the caller's
 * scope applied: the admin sees every tree, a tenant key only its own. Another
 * tenant's tree is a 404 exactly like an unknown one (never a 403: no oracle).
 * Routes with a `:treeId` take `treeAccess()`; a tree named elsewhere (a body's
 * `tree_id`, a node's tree) goes through `ownedTree` / `findOwnedTree`.
 * `POST /trees/:treeId/move` is admin-only (403 for any tenant key, whatever
 * the tree) and its writer answers 404 for an unknown tree, so it reads nothing here.
 */

/** A tree the caller may see, with its full frame. */
export type VisibleTree = NonNullable<Awaited<ReturnType<typeof readTree>>>;

/** Hono variables set by `treeAccess`: the tree and the shard that holds it. */
export interface TreeVariables {
  tree: VisibleTree;
  shard: Shard;
}

/** The context of a route behind `treeAccess`. */
export type TreeEnv = { Bindings: Env; Variables: AuthVariables & TreeVariables };
export type TreeCtx = Context<TreeEnv>;
/** The context of a route behind `withQuery` and `treeAccess`. */
export type TreeQueryCtx<Q> = Context<{ Bindings: Env; Variables: AuthVariables & TreeVariables & QueryVariables<Q> }>;

/** What the check needs of a request: the env and the resolved caller. */
type CallerCtx = { env: Env; var: AuthVariables };

/** The tree and its shard if the caller may see it, else null (unknown and foreign alike). */
export async function findOwnedTree(c: CallerCtx, treeId: string): Promise<TreeVariables | null> {
  const shard = await shardFor(c.env, treeId, { timeoutMs: c.var.services.config.directoryTimeoutMs });
  const tree = await readTree(shard.db, treeId, scopeOf(c));
  return tree ? { tree, shard } : null;
}

/** The tree and its shard if the caller may see it, else a 404 naming `what`. */
export async function ownedTree(c: CallerCtx, treeId: string, what = "tree"): Promise<TreeVariables> {
  const owned = await findOwnedTree(c, treeId);
  if (!owned) throw notFound(what);
  return owned;
}

/** Middleware for `:treeId` routes: 400 for a malformed id, 404 for a tree the caller may not see, else `c.var.tree` and `c.var.shard`. */
export function treeAccess(): MiddlewareHandler<TreeEnv> {
  return async (c, next) => {
    const { tree, shard } = await ownedTree(c, hashParam(c, "treeId"));
    c.set("tree", tree);
    c.set("shard", shard);
    await next();
  };
}
