import { readNode, readPath } from "../../store/tree/node-read";
import { findInShards } from "../../store/shards/shards";
import { hashParam, notFound, scopeOf, type ApiCtx } from "./params";

/** `GET /api/nodes/:hash`: one node in full, its message in its tree's API's shape. */
export async function getNode(c: ApiCtx): Promise<Response> {
  const hash = hashParam(c, "hash");
  const found = await findInShards(c.var.services.shards, (db) => readNode(db, hash, scopeOf(c)));
  if (!found) throw notFound("node");
  return c.json(found.value);
}

/** `GET /api/nodes/:hash/path`: the path from the root to the node as the message list its API sends (chat or Anthropic messages, Responses `input`, Gemini `contents`). */
export async function getPath(c: ApiCtx): Promise<Response> {
  const hash = hashParam(c, "hash");
  const found = await findInShards(c.var.services.shards, (db) => readPath(db, hash, scopeOf(c)));
  if (!found) throw notFound("node");
  return c.json(found.value);
}
