import type { Config } from "../config";
import type { Claim, Joined } from "../store/single-flight";
import type { TreeWriter } from "../store/tree-writer";
import { withTimeout } from "./chat/lookup";

/**
 * Single flight through the tree's object. Reaching it is bounded by
 * LOOKUP_TIMEOUT_MS; waiting for another request's generation by
 * SINGLE_FLIGHT_WAIT_MS. Throws when either runs out (the caller steps aside).
 */
export async function claimOf(writer: DurableObjectStub<TreeWriter>, key: string, config: Config): Promise<Claim> {
  // RPC wraps union results in stubs' types; the claim is plain data, so unwrap it.
  const joined = await withTimeout(writer.join(key) as unknown as Promise<Joined>, config.lookupTimeoutMs, "single-flight join");
  if (joined.role !== "waiting") return joined;
  return withTimeout(writer.follow(key) as unknown as Promise<Claim>, config.singleFlightWaitMs, "single-flight wait");
}
