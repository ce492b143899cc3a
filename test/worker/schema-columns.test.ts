import { env } from "cloudflare:workers";
import { is } from "drizzle-orm";
import { getTableConfig, SQLiteTable } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import * as schema from "../../src/store/tree/schema";

/**
 * The store's row types are derived from src/store/tree/schema.ts (TreeRecord, NodeRecord, RecentRequestRecord…),
 * while the database is built by migrations/: the two must describe the same tables, or a derived row type names a
 * column that a query never gets. Checked against the migrated database of the pool.
 */

interface ColumnInfo {
  name: string;
  type: string;
  notnull: number;
  pk: number;
}

const tables: SQLiteTable[] = Object.values(schema as Record<string, unknown>).filter((v): v is SQLiteTable => is(v, SQLiteTable));

function described(table: SQLiteTable) {
  const config = getTableConfig(table);
  const keyed = new Set([...config.columns.filter((c) => c.primary).map((c) => c.name), ...config.primaryKeys.flatMap((k) => k.columns.map((c) => c.name))]);
  return {
    columns: config.columns
      .map((c) => ({ name: c.name, type: c.getSQLType(), notnull: c.notNull || keyed.has(c.name), pk: keyed.has(c.name) }))
      .sort((a, b) => a.name.localeCompare(b.name)),
    indexes: config.indexes.map((i) => i.config.name).sort(),
  };
}

async function migrated(name: string) {
  const columns = await env.DB.prepare('SELECT name, type, "notnull", pk FROM pragma_table_info(?1)').bind(name).all<ColumnInfo>();
  const indexes = await env.DB.prepare("SELECT name FROM pragma_index_list(?1) WHERE origin = 'c'").bind(name).all<{ name: string }>();
  return {
    columns: columns.results
      .map((c) => ({ name: c.name, type: c.type.toLowerCase(), notnull: c.notnull === 1 || c.pk > 0, pk: c.pk > 0 }))
      .sort((a, b) => a.name.localeCompare(b.name)),
    indexes: indexes.results.map((i) => i.name).sort(),
  };
}

describe("schema.ts and migrations/", () => {
  it("Should describe exactly the migrated tables", async () => {
    const names = await env.DB.prepare(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND name != 'd1_migrations' ORDER BY name",
    ).all<{ name: string }>();
    expect(tables.map((t) => getTableConfig(t).name).sort()).toEqual(names.results.map((r) => r.name));
    expect(tables.length).toBeGreaterThanOrEqual(11);
  });

  it("Should give each table the migrated columns (name, type, not null, primary key) and indexes", async () => {
    for (const table of tables) {
      const name = getTableConfig(table).name;
      expect({ table: name, ...described(table) }).toEqual({ table: name, ...(await migrated(name)) });
    }
  });
});
