import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/** The bytes SQLite's record format spends on an integer column's value. */
function intBytes(col: string): string {
  return `(CASE WHEN ${col} IS NULL OR ${col} IN (0, 1) THEN 0 WHEN abs(${col}) < 128 THEN 1 WHEN abs(${col}) < 32768 THEN 2 WHEN abs(${col}) < 8388608 THEN 3 WHEN abs(${col}) < 2147483648 THEN 4 WHEN abs(${col}) < 140737488355328 THEN 6 ELSE 8 END)`;
}

const NODE_INTS = ["depth", "observations", "hits", "prompt_tokens", "completion_tokens", "latency_ms", "created_at", "last_hit_at"];
const TREE_INTS = [
  "created_at",
  "last_hit_at",
  "node_count",
  "hits",
  "misses",
  "bypasses",
  "prompt_tokens_saved",
  "completion_tokens_saved",
  "latency_saved_ms",
];

/**
 * Row payload bytes: the text of every column plus each integer's size in
 * SQLite's record format and one header byte per column. Indexes and page
 * overhead are not included (see `fileBytes`).
 */
export const STORED_BYTES_SQL = `SELECT
  (SELECT COALESCE(SUM(length(hash) + length(parent) + length(tree_id) + length(role) + length(message) + COALESCE(length(finish_reason), 0) + ${NODE_INTS.map(intBytes).join(" + ")} + 15), 0) FROM nodes)
  + (SELECT COALESCE(SUM(length(id) + length(tenant) + length(namespace) + length(model) + length(frame) + ${TREE_INTS.map(intBytes).join(" + ")} + 15), 0) FROM trees) AS bytes,
  (SELECT COUNT(*) FROM nodes) AS nodes`;

export interface StorageMeasure {
  /** Row payload (STORED_BYTES_SQL). */
  rowBytes: number;
  nodes: number;
  /** The local D1 SQLite file(s), indexes and free pages included; null when not found. */
  fileBytes: number | null;
}

function sqliteFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sqliteFiles(path));
    else if (/\.sqlite(-wal)?$/.test(entry.name) && path.includes(`${join("d1")}`)) out.push(path);
  }
  return out;
}

/** Measures what the tree stores, through a SQL runner on the local D1 and its state folder. */
export async function measureStorage(sql: (query: string) => Promise<Array<Record<string, unknown>>>, stateDir?: string): Promise<StorageMeasure> {
  const [row] = await sql(STORED_BYTES_SQL);
  let fileBytes: number | null = null;
  if (stateDir) {
    const files = sqliteFiles(stateDir);
    fileBytes = files.length ? files.reduce((sum, f) => sum + statSync(f).size, 0) : null;
  }
  return { rowBytes: Number(row.bytes), nodes: Number(row.nodes), fileBytes };
}
