import { ApiError } from "../../core/errors";
import { countTrees } from "../../store/tree/tenant-trees";
import { databasesOf } from "../../store/shards/shards";
import { scopeOf, type ApiCtx } from "./params";
import type { Config } from "../../config";
import { sourceOf } from "./series";

/** Whether GET /api/series can answer, and if not what to set (the dashboard shows it without a failing call). */
function seriesSetup(analytics: Config["analytics"]): { configured: boolean; setup: string | null } {
  try {
    sourceOf(analytics);
    return { configured: true, setup: null };
  } catch (error) {
    if (error instanceof ApiError) return { configured: false, setup: error.message };
    throw error;
  }
}

/** The first characters of a tenant id, as the dashboard shows it. */
export function shortTenant(tenant: string): string {
  return tenant.slice(0, 8);
}

/**
 * `GET /api/whoami`: which identity the bearer credential resolved to (the
 * admin, or the tenant its key hashes to) and how many trees it can see. A
 * tenant with no trees is most often a mistyped admin token: the dashboard says so.
 */
export async function getWhoami(c: ApiCtx): Promise<Response> {
  const scope = scopeOf(c);
  const { trees, tenants } = await countTrees(databasesOf(c.var.services.shards), scope);
  if (!("tenant" in scope)) {
    return c.json({
      role: "admin",
      trees,
      tenants: tenants.length,
      by_tenant: tenants.map((t) => ({ ...t, short: shortTenant(t.tenant) })),
      series: seriesSetup(c.var.services.config.analytics),
    });
  }
  return c.json({ role: "tenant", tenant: scope.tenant, short: shortTenant(scope.tenant), trees });
}
