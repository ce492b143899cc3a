import { z } from "zod";
import { HEX32 } from "../../core/protocol";
import { ownersOf, shardsToRead } from "../../store/shards/directory-backfill";
import { searchTree } from "../../store/tree/search";
import { nodeOwner } from "../../store/tree/node-read";
import { listChildren, listTrees } from "../../store/tree/tree-list";
import { decodeCursor, limitSchema, notFound, parseWith, scopeOf, withQuery, type ApiCtx } from "./params";
import type { TreeCtx, TreeQueryCtx } from "./tree-access";
import { tenantScope } from "../../store/tree/scope";

const NAMESPACE = /^[A-Za-z0-9._:\-/]{1,128}$/;

const listQuery = z.object({
  limit: limitSchema(50, 200),
  cursor: z.string().max(512).optional(),
  namespace: z.string().regex(NAMESPACE, "must be a namespace (1-128 of A-Z a-z 0-9 . _ : - /)").optional(),
  tenant: z.string().regex(HEX32, "must be a tenant id (32 lowercase hex characters)").optional(),
});

/** `GET /api/trees`: the caller's trees, newest activity first; `tenant` narrows the admin's list (a tenant key sees only its own). */
export async function getTrees(c: ApiCtx): Promise<Response> {
  const q = parseWith(listQuery, c.req.query());
  const after = q.cursor ? decodeCursor(q.cursor, ["number", "string"] as const) : undefined;
  const caller = scopeOf(c);
  if ("tenant" in caller && q.tenant !== undefined && q.tenant !== caller.tenant) return c.json({ data: [], next_cursor: null });
  // The admin may narrow the list to one tenant; a tenant key always sees only its own.
  const scope = "tenant" in caller || q.tenant === undefined ? caller : tenantScope(q.tenant);
  const from = await shardsToRead(c.env, scope);
  return c.json(await listTrees(from, { scope, namespace: q.namespace, limit: q.limit, after }, (ids) => ownersOf(c.env, ids)));
}

/** `GET /api/trees/:treeId` (behind treeAccess): one tree with its full frame. */
export async function getTree(c: TreeCtx): Promise<Response> {
  return c.json(c.var.tree);
}

const childrenSchema = z.object({
  parent: z.string().regex(HEX32, "must be 32 lowercase hex characters").optional(),
  limit: limitSchema(50, 500),
  cursor: z.string().max(512).optional(),
});

function parseChildren(raw: Record<string, string>) {
  const q = parseWith(childrenSchema, raw);
  return { parent: q.parent, limit: q.limit, after: q.cursor ? decodeCursor(q.cursor, ["number"] as const)[0] : 0 };
}

/** The children query, parsed before the tree is read (a bad one is a 400 even for an unknown tree). */
export const childrenQuery = withQuery(parseChildren);

/** `GET /api/trees/:treeId/children` (behind childrenQuery and treeAccess): one level of the tree, paginated. */
export async function getChildren(c: TreeQueryCtx<ReturnType<typeof parseChildren>>): Promise<Response> {
  const { tree, shard, query } = c.var;
  const parent = query.parent ?? tree.id;
  if (parent !== tree.id && (await nodeOwner(shard.db, parent))?.treeId !== tree.id) throw notFound("node in this tree");
  return c.json(await listChildren(shard.db, parent, query.limit, query.after));
}

const searchSchema = z.object({
  q: z.string().trim().min(1, "give the text to search for").max(200, "at most 200 characters"),
  limit: limitSchema(20, 100),
});

/** The search query, parsed before the tree is read. */
export const searchQuery = withQuery((raw) => parseWith(searchSchema, raw));

/** `GET /api/trees/:treeId/search?q=` (behind searchQuery and treeAccess): nodes whose message contains the text (content, tool name, tool arguments), with their paths. */
export async function getSearch(c: TreeQueryCtx<z.infer<typeof searchSchema>>): Promise<Response> {
  const { tree, shard, query } = c.var;
  const data = await searchTree(shard.db, tree.id, query.q, query.limit);
  return c.json({ tree_id: tree.id, q: query.q, data, truncated: data.length === query.limit });
}
