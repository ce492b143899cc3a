/**
 * The paged SQL a tree's move is made of (move-pages.ts copies, drain-tree.ts
 * deletes): multi-row inserts, `IN` lists and reads kept under D1's 100 bound
 * parameters per statement, and the per-table counts a copy or a drain reports.
 */

/** Rows one page reads (and writes). */
export const PAGE_ROWS = 100;

/** D1's bound-parameter limit per statement. */
export const MAX_PARAMS = 100;

export type Row = Record<string, unknown>;

/** What a copy or a drain touched, per table. */
export interface PageCounts {
  trees: number;
  nodes: number;
  templates: number;
  evidence: number;
  observations: number;
}

export function noCounts(): PageCounts {
  return { trees: 0, nodes: 0, templates: 0, evidence: 0, observations: 0 };
}

const IDENT = /^[a-z_]+$/;

/** `INSERT OR REPLACE` statements for `rows` of `table`, as many rows per statement as the parameter limit allows. */
export function inserts(db: D1Database, table: string, rows: readonly Row[]): D1PreparedStatement[] {
  if (rows.length === 0) return [];
  const columns = Object.keys(rows[0]).filter((c) => IDENT.test(c));
  const perStatement = Math.max(1, Math.floor(MAX_PARAMS / columns.length));
  const out: D1PreparedStatement[] = [];
  for (let i = 0; i < rows.length; i += perStatement) {
    const chunk = rows.slice(i, i + perStatement);
    const values = chunk.map((_, r) => `(${columns.map((__, c) => `?${r * columns.length + c + 1}`).join(", ")})`).join(", ");
    const params = chunk.flatMap((row) => columns.map((c) => row[c] ?? null));
    out.push(db.prepare(`INSERT OR REPLACE INTO ${table} (${columns.join(", ")}) VALUES ${values}`).bind(...params));
  }
  return out;
}

export function placeholders(n: number, from = 1): string {
  return Array.from({ length: n }, (_, i) => `?${i + from}`).join(", ");
}

/** Rows of `table` whose `column` is one of `keys` (keys in chunks under the parameter limit). */
export async function rowsWhereIn(db: D1Database, table: string, column: string, keys: readonly string[]): Promise<Row[]> {
  const out: Row[] = [];
  for (let i = 0; i < keys.length; i += MAX_PARAMS) {
    const chunk = keys.slice(i, i + MAX_PARAMS);
    const page = await db
      .prepare(`SELECT * FROM ${table} WHERE ${column} IN (${placeholders(chunk.length)})`)
      .bind(...chunk)
      .all<Row>();
    out.push(...page.results);
  }
  return out;
}

export function withoutRowid(row: Row): Row {
  const { _rowid: _, ...rest } = row;
  return rest;
}
