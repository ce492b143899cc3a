import { z } from "zod";
import { NEXT_CURSOR_HEADER } from "../../protocol";
import { shardFor } from "../../store/directory";
import { exportLines } from "../../store/export";
import { readTree } from "../../store/trajectories";
import { decodeCursor, hashParam, limitSchema, notFound, parseWith, scopeOf, type ApiCtx } from "./params";

const exportQuery = z.object({ limit: limitSchema(1000, 10_000), cursor: z.string().max(512).optional() });

/** An export page stops after the batch that crosses this many characters (memory stays bounded). */
const PAGE_CHARS = 16_000_000;

/**
 * `GET /api/trees/:treeId/export`: JSONL, one line per leaf path, up to
 * `limit` lines (or about 16 MB); the next page's cursor is in the `muscle-mem-next-cursor` header.
 */
export async function getExport(c: ApiCtx): Promise<Response> {
  const treeId = hashParam(c, "treeId");
  const q = parseWith(exportQuery, c.req.query());
  const after = q.cursor ? decodeCursor(q.cursor, ["number", "number"] as const) : ([0, 0] as [number, number]);
  const db = (await shardFor(c.env, treeId)).db;
  const tree = await readTree(db, treeId, scopeOf(c));
  if (!tree) throw notFound("tree");
  const chunks: string[] = [];
  let chars = 0;
  const next = await exportLines(db, tree, { after, limit: q.limit }, (line) => {
    const json = `${JSON.stringify(line)}\n`;
    chunks.push(json);
    chars += json.length;
    return chars < PAGE_CHARS;
  });
  const headers: Record<string, string> = { "content-type": "application/x-ndjson; charset=utf-8" };
  if (next) headers[NEXT_CURSOR_HEADER] = next;
  return new Response(chunks.join(""), { headers });
}
