import { tenantParam, type Scope } from "./scope";
/** How many trees one tenant owns. */
export interface TenantTrees {
  tenant: string;
  trees: number;
}

/** Tenants listed to the admin, at most (the busiest first). */
export const TENANTS_SHOWN = 100;

/**
 * The trees a caller can see, counted over every shard: for a tenant its own,
 * for the admin (EVERY_TENANT) every tenant's, with the tenants that own them
 * (a tenant's trees may sit in several shards: the counts add up).
 */
export async function countTrees(dbs: readonly D1Database[], scope: Scope): Promise<{ trees: number; tenants: TenantTrees[] }> {
  const perShard = await Promise.all(
    dbs.map((db) =>
      db
        .prepare(
          `SELECT tenant, count(*) AS trees FROM trees WHERE (?1 IS NULL OR tenant = ?1) GROUP BY tenant ORDER BY trees DESC LIMIT ${TENANTS_SHOWN * 10}`,
        )
        .bind(tenantParam(scope))
        .all<TenantTrees>(),
    ),
  );
  const byTenant = new Map<string, number>();
  for (const page of perShard) for (const row of page.results) byTenant.set(row.tenant, (byTenant.get(row.tenant) ?? 0) + row.trees);
  const tenants = [...byTenant].map(([t, n]) => ({ tenant: t, trees: n })).sort((a, b) => b.trees - a.trees || (a.tenant < b.tenant ? -1 : 1));
  return { trees: tenants.reduce((sum, t) => sum + t.trees, 0), tenants: tenants.slice(0, TENANTS_SHOWN) };
}
