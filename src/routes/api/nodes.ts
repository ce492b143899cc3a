import { readNode, readPath } from "../../store/node-read";
import { hashParam, notFound, scopeOf, type ApiCtx } from "./params";

/** `GET /api/nodes/:hash`: one node in full. */
export async function getNode(c: ApiCtx): Promise<Response> {
  const node = await readNode(c.env.DB, hashParam(c, "hash"), scopeOf(c));
  if (!node) throw notFound("node");
  return c.json(node);
}

/** `GET /api/nodes/:hash/path`: the path from the root to the node as an OpenAI message list. */
export async function getPath(c: ApiCtx): Promise<Response> {
  const path = await readPath(c.env.DB, hashParam(c, "hash"), scopeOf(c));
  if (!path) throw notFound("node");
  return c.json(path);
}
