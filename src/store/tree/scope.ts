/**
 * Whose trees a query may read: every tenant's (the admin's scope) or one tenant's. Every store read that
 * can cross tenants takes a Scope, so that forgetting the tenant is a type error, not a leak.
 */
export type Scope = { readonly all: true } | { readonly tenant: string };

/** The admin's scope: every tenant. */
export const EVERY_TENANT: Scope = { all: true };

/** One tenant's scope. */
export function tenantScope(tenant: string): Scope {
  return { tenant };
}

/**
 * The value bound to a query's tenant clause, written `(?n IS NULL OR tenant = ?n)`: null reads every
 * tenant. Only this function turns a Scope into that null.
 */
export function tenantParam(scope: Scope): string | null {
  return "tenant" in scope ? scope.tenant : null;
}

/** Whether a row owned by `owner` may be shown in `scope`. */
export function inScope(scope: Scope, owner: string): boolean {
  return !("tenant" in scope) || scope.tenant === owner;
}
