import { ApiError } from "../../core/errors";
import { z } from "zod";
import { NEXT_CURSOR_HEADER } from "../../core/protocol";
import { exportLines } from "../../store/trajectories/export";
import { decodeCursor, limitSchema, parseWith, withQuery } from "./params";
import type { TreeQueryCtx } from "./tree-access";

const exportSchema = z.object({ limit: limitSchema(1000, 10_000), cursor: z.string().max(512).optional() });

/** An export page stops after the batch that crosses this many characters (memory stays bounded). */
const PAGE_CHARS = 16_000_000;

function parseExport(raw: Record<string, string>) {
  const q = parseWith(exportSchema, raw);
  return { limit: q.limit, after: q.cursor ? decodeCursor(q.cursor, ["number", "number"] as const) : ([0, 0] as [number, number]) };
}

/** The export query, parsed before the tree is read (a bad one is a 400 even for an unknown tree). */
export const exportQuery = withQuery(parseExport);

/**
 * `GET /api/trees/:treeId/export` (behind exportQuery and treeAccess): JSONL, one line per leaf path, up to
 * `limit` lines (or about 16 MB); the next page's cursor is in the `muscle-mem-next-cursor` header.
 */
export async function getExport(c: TreeQueryCtx<ReturnType<typeof parseExport>>): Promise<Response> {
  const { tree, shard, query } = c.var;
  // Lines without their frame would seed another deployment with answers keyed without their tools and parameters.
  if (tree.damaged) throw new ApiError("conflict", `Tree ${tree.id} has a damaged frame (not a JSON object): it cannot be exported.`);
  const chunks: string[] = [];
  let chars = 0;
  const next = await exportLines(shard.db, tree, { after: query.after, limit: query.limit }, (line) => {
    const json = `${JSON.stringify(line)}\n`;
    chunks.push(json);
    chars += json.length;
    return chars < PAGE_CHARS;
  });
  const headers: Record<string, string> = { "content-type": "application/x-ndjson; charset=utf-8" };
  if (next) headers[NEXT_CURSOR_HEADER] = next;
  return new Response(chunks.join(""), { headers });
}
