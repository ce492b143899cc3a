import type { WranglerDev } from "../test/support/wrangler-dev";

/** The tables a recording inserts rows into: the tree and its nodes, and what template learning keeps. */
export const RECORDING_TABLES = ["trees", "nodes", "templates", "template_observations", "template_evidence"] as const;

export type TableRows = Record<(typeof RECORDING_TABLES)[number], number>;

/** The row count of every recording table of the local `DB`, read in one query. */
export async function tableRows(dev: WranglerDev): Promise<TableRows> {
  const row = (await dev.sql(`SELECT ${RECORDING_TABLES.map((t) => `(SELECT COUNT(*) FROM ${t}) AS ${t}`).join(", ")}`))[0];
  return Object.fromEntries(RECORDING_TABLES.map((t) => [t, Number(row[t])])) as TableRows;
}

/**
 * Rows inserted per miss, by table, between two counts (D1 bills each
 * inserted row as a row written; rows a recording updates in place, such as
 * its tree's miss counter, do not show in a count).
 */
export function insertedPerMiss(before: TableRows, after: TableRows, misses: number): TableRows {
  return Object.fromEntries(RECORDING_TABLES.map((t) => [t, (after[t] - before[t]) / misses])) as TableRows;
}
