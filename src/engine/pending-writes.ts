/**
 * Recordings this isolate has yet to write, per tenant, from the moment their answer reached the client: a
 * client that chains its next request by the upstream's response id (`previous_response_id`, sent as soon as
 * the answer arrived) may arrive before the recording naming that id is in D1. Resolving such an id waits
 * for the tenant's pending writes here first (bounded, as every resolve, by LOOKUP_TIMEOUT_MS). Another
 * isolate reads D1 only.
 */
const pending = new Map<string, Set<Promise<unknown>>>();

/** Remembers `write` (a generation's settling) for `tenant` until it settles. */
export function trackWrite(tenant: string, write: Promise<unknown>): void {
  const set = pending.get(tenant) ?? new Set();
  pending.set(tenant, set);
  const settled: Promise<unknown> = write
    .catch(() => undefined)
    .finally(() => {
      set.delete(settled);
      if (set.size === 0 && pending.get(tenant) === set) pending.delete(tenant);
    });
  set.add(settled);
}

/** Resolves once every write of `tenant` pending in this isolate when called has settled. */
export async function writesSettled(tenant: string): Promise<void> {
  const set = pending.get(tenant);
  if (set) await Promise.all([...set]);
}
