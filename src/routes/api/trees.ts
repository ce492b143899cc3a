import { z } from "zod";
import { HEX32 } from "../../protocol";
import { shardFor } from "../../store/directory";
import { ownersOf, shardsToRead } from "../../store/directory-backfill";
import { searchTree } from "../../store/search";
import { listChildren, listTrees, readTree } from "../../store/trajectories";
import { decodeCursor, hashParam, limitSchema, notFound, parseWith, scopeOf, type ApiCtx } from "./params";

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
  const scope = scopeOf(c);
  if (scope !== null && q.tenant !== undefined && q.tenant !== scope) return c.json({ data: [], next_cursor: null });
  const tenant = scope ?? q.tenant ?? null;
  const from = await shardsToRead(c.env, tenant);
  return c.json(await listTrees(from, { tenant, namespace: q.namespace, limit: q.limit, after }, (ids) => ownersOf(c.env, ids)));
}

/** `GET /api/trees/:treeId`: one tree with its full frame. */
export async function getTree(c: ApiCtx): Promise<Response> {
  const treeId = hashParam(c, "treeId");
  const tree = await readTree((await shardFor(c.env, treeId)).db, treeId, scopeOf(c));
  if (!tree) throw notFound("tree");
  return c.json(tree);
}

const childrenQuery = z.object({
  parent: z.string().regex(HEX32, "must be 32 lowercase hex characters").optional(),
  limit: limitSchema(50, 500),
  cursor: z.string().max(512).optional(),
});

/** `GET /api/trees/:treeId/children`: one level of the tree, paginated. */
export async function getChildren(c: ApiCtx): Promise<Response> {
  const treeId = hashParam(c, "treeId");
  const q = parseWith(childrenQuery, c.req.query());
  const after = q.cursor ? decodeCursor(q.cursor, ["number"] as const)[0] : 0;
  const scope = scopeOf(c);
  const parent = q.parent ?? treeId;
  const db = (await shardFor(c.env, treeId)).db;
  const owned = await db.prepare(
    `SELECT 1 AS ok FROM trees t WHERE t.id = ?1 AND (?2 IS NULL OR t.tenant = ?2)
       AND (?3 = ?1 OR EXISTS (SELECT 1 FROM nodes n WHERE n.hash = ?3 AND n.tree_id = ?1))`,
  )
    .bind(treeId, scope, parent)
    .first();
  if (!owned) throw notFound(q.parent ? "node in this tree" : "tree");
  return c.json(await listChildren(db, parent, q.limit, after));
}

const searchQuery = z.object({
  q: z.string().trim().min(1, "give the text to search for").max(200, "at most 200 characters"),
  limit: limitSchema(20, 100),
});

/** `GET /api/trees/:treeId/search?q=`: nodes whose message contains the text (content, tool name, tool arguments), with their paths. */
export async function getSearch(c: ApiCtx): Promise<Response> {
  const treeId = hashParam(c, "treeId");
  const q = parseWith(searchQuery, c.req.query());
  const db = (await shardFor(c.env, treeId)).db;
  const owned = await db.prepare(`SELECT 1 AS ok FROM trees WHERE id = ?1 AND (?2 IS NULL OR tenant = ?2)`).bind(treeId, scopeOf(c)).first();
  if (!owned) throw notFound("tree");
  const data = await searchTree(db, treeId, q.q, q.limit);
  return c.json({ tree_id: treeId, q: q.q, data, truncated: data.length === q.limit });
}
