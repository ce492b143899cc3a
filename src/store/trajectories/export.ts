import { encodeCursor } from "../tree/cursor";
import type { NodeRecord } from "../tree/schema";
import { API_FRAME_KEY, type ExportNode } from "../../providers/trajectory/formats";
import { splitFrame } from "../../providers/trajectory/line";
import { formatOfApi, type TrajectoryMessage } from "./messages";
import { logEvent } from "../../observability/log-event";

/**
 * One exported line: the shape of shared/workloads/*.jsonl, plus where it
 * came from. A tree of an API with a format of its own (Responses, Gemini:
 * src/providers/trajectory/by-api.ts) has that API's conversation instead
 * of `messages` (`input`, `contents`) and `answer_usage`.
 */
export type ExportLine = ChatExportLine | ({ id: string; tree_id: string; namespace: string; model: string } & Record<string, unknown>);

/** A line of a chat (or Anthropic Messages) tree. */
export interface ChatExportLine {
  id: string;
  tree_id: string;
  namespace: string;
  model: string;
  tools: unknown[] | null;
  params?: Record<string, unknown>;
  messages: TrajectoryMessage[];
  /** Assistant messages on the path that are not recorded answers (sent by the client, never generated). */
  scripted_assistant_idx: number[];
}

export interface ExportTree {
  id: string;
  namespace: string;
  model: string;
  frame: Record<string, unknown>;
}

/** Leaves read per query, and so paths assembled per query. */
const LEAVES_PER_QUERY = 25;

/** A leaf and its rowid (`rid`, the keyset's second half). */
type LeafRow = Pick<NodeRecord, "hash" | "depth"> & { rid: number };

type PathRow = Pick<NodeRecord, "hash" | "parent" | "role" | "message" | "observations" | "prompt_tokens" | "completion_tokens" | "finish_reason">;

/**
 * The leaves of a tree after a position, keyset-paginated on (depth, rowid),
 * which is the order of nodes_tree_idx (tree_id, depth): no sort of the tree.
 */
async function leavesAfter(db: D1Database, treeId: string, after: [number, number], limit: number): Promise<LeafRow[]> {
  const rows = await db
    .prepare(
      `SELECT n.rowid AS rid, n.hash, n.depth FROM nodes n
       WHERE n.tree_id = ?1 AND (n.depth > ?2 OR (n.depth = ?2 AND n.rowid > ?3))
         AND NOT EXISTS (SELECT 1 FROM nodes c WHERE c.parent = n.hash)
       ORDER BY n.depth, n.rowid LIMIT ?4`,
    )
    .bind(treeId, after[0], after[1], limit)
    .all<LeafRow>();
  return rows.results;
}

/** Every node on the paths to the given leaves, each once: one recursive query. */
async function pathNodes(db: D1Database, leaves: string[]): Promise<Map<string, PathRow>> {
  const rows = await db
    .prepare(
      `WITH RECURSIVE up(h) AS (SELECT value FROM json_each(?1) UNION SELECT n.parent FROM nodes n JOIN up ON n.hash = up.h)
       SELECT n.hash, n.parent, n.role, n.message, n.observations, n.prompt_tokens, n.completion_tokens, n.finish_reason FROM up JOIN nodes n ON n.hash = up.h`,
    )
    .bind(JSON.stringify(leaves))
    .all<PathRow>();
  return new Map(rows.results.map((r) => [r.hash, r]));
}

function lineOf(tree: ExportTree, leaf: string, byHash: Map<string, PathRow>): ExportLine {
  const rows: PathRow[] = [];
  for (let row = byHash.get(leaf); row; row = byHash.get(row.parent)) rows.push(row);
  rows.reverse();
  const format = formatOfApi(tree.frame[API_FRAME_KEY]);
  if (format.exportFields) {
    const path: ExportNode[] = rows.map((r) => ({
      role: r.role,
      message: r.message,
      observations: r.observations,
      promptTokens: r.prompt_tokens,
      completionTokens: r.completion_tokens,
      finishReason: r.finish_reason,
    }));
    return { id: leaf, tree_id: tree.id, namespace: tree.namespace, model: tree.model, ...format.exportFields(tree.frame, path) };
  }
  const { tools, params } = splitFrame(tree.frame);
  const scripted: number[] = [];
  rows.forEach((r, i) => {
    if (r.role === "assistant" && (r.observations === 0 || i === 0)) scripted.push(i);
  });
  return {
    id: leaf,
    tree_id: tree.id,
    namespace: tree.namespace,
    model: tree.model,
    tools,
    ...(params ? { params } : {}),
    messages: rows.map((r) => format.nodeMessage(r.message)),
    scripted_assistant_idx: scripted,
  };
}

/**
 * The line of a leaf's path, or null (and one `export_line_skipped` log line) when the path cannot be
 * exported as it was recorded: a node on it is damaged (its message not its API's message) or its chain
 * does not reach the tree's root (a missing parent: the line would hand an import an answer without the
 * conversation it answered).
 */
function soundLineOf(tree: ExportTree, leaf: string, byHash: Map<string, PathRow>): ExportLine | null {
  let root: PathRow | undefined;
  for (let row = byHash.get(leaf); row; row = byHash.get(row.parent)) root = row;
  if (root?.parent !== tree.id) {
    logEvent("error", "export_line_skipped", { tree: tree.id, leaf, reason: "path does not reach the root" });
    return null;
  }
  try {
    return lineOf(tree, leaf, byHash);
  } catch (error) {
    logEvent("error", "export_line_skipped", { tree: tree.id, leaf, reason: "damaged node", error: String(error) });
    return null;
  }
}

/**
 * Writes up to `limit` lines (one per leaf path) after `after`, stopping early
 * after a batch in which `write` answered false (a size budget), and answers
 * the cursor of the next line, or null at the end of the tree.
 */
export async function exportLines(
  db: D1Database,
  tree: ExportTree,
  q: { after: [number, number]; limit: number },
  write: (line: ExportLine) => boolean,
): Promise<string | null> {
  let after = q.after;
  let left = q.limit;
  while (left > 0) {
    const leaves = await leavesAfter(db, tree.id, after, Math.min(LEAVES_PER_QUERY, left) + 1);
    const batch = leaves.slice(0, Math.min(LEAVES_PER_QUERY, left));
    if (batch.length === 0) return null;
    const byHash = await pathNodes(
      db,
      batch.map((l) => l.hash),
    );
    let more = true;
    for (const leaf of batch) {
      const line = soundLineOf(tree, leaf.hash, byHash);
      if (line) more = write(line) && more;
    }
    const last = batch[batch.length - 1];
    after = [last.depth, last.rid];
    left -= batch.length;
    if (leaves.length <= batch.length) return null;
    if (!more) break;
  }
  return encodeCursor(after);
}
