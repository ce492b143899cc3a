import type { LookedUp, LookupOrJoinRequest } from "../../store/objects/lookup-or-join";
import type { TreeWriter } from "../../store/objects/tree-writer";
import { withTimeout } from "../../core/deadline";
import { addD1 } from "../../observability/store-meter";

/** What a cold lookup needs to go on to the tree's object when the Worker's own D1 read found nothing to serve: its stub and what to ask. */
export interface FarLookup {
  writer: DurableObjectStub<TreeWriter>;
  treeId: string;
  /** Whether the route serves learned templates (a tree with live ones is then looked up, not joined). */
  templates: boolean;
  /** Whether a miss may join single flight in the same call (not for `only-if-cached`, which never generates). */
  join: boolean;
  /** Runs work after the response (ctx.waitUntil). */
  defer?: (work: Promise<unknown>) => void;
  /** The request's path hashes: a miss then says how deep its path is recorded (in the lookup's own query). */
  path?: string[];
}

/**
 * The object call of a cold lookup that found nothing to serve: TreeWriter.lookupOrJoin, bounded by
 * LOOKUP_TIMEOUT_MS. With `primary`, the object may join without reading the answers again (its checks:
 * src/store/objects/lookup-or-join.ts); its `reread` says which it did. The D1 queries the object made for it are booked to the
 * request (`server-timing` d1). Throws on a failure or timeout (the caller fails open).
 * When the Worker stopped waiting but the object made it the leader after all,
 * the claim is released once the late answer arrives, so that no one waits
 * out a lease for a generation that never comes.
 */
export async function lookUpFar(
  far: FarLookup,
  request: Omit<LookupOrJoinRequest, "treeId" | "templates" | "join" | "path" | "seen">,
  /** The Worker's own read went to the primary of this shard, at `readAt` (its clock): the object may take it as its own. */
  primary?: { shard: string; readAt: number },
): Promise<LookedUp> {
  const seen = primary ? { seen: { shard: primary.shard, agoMs: Math.max(0, Date.now() - primary.readAt) } } : {};
  // SAFETY: RPC types a union result as a stub; LookedUp is plain data (structured clone), so the cast only unwraps that type.
  const call = far.writer.lookupOrJoin({
    ...request,
    treeId: far.treeId,
    templates: far.templates,
    join: far.join,
    ...(far.path ? { path: far.path } : {}),
    ...seen,
  }) as unknown as Promise<LookedUp>;
  try {
    const found = await withTimeout(call, request.timeoutMs, "lookup in the tree's object");
    addD1(found.d1);
    return found;
  } catch (error) {
    const release = call
      .then(async (late) => {
        if (late.status === "miss" && late.joined?.role === "leader") await far.writer.release(request.key, late.joined.token);
      })
      .catch(() => undefined);
    far.defer?.(release);
    throw error;
  }
}
