import type { Config } from "../config";
import { logEvent } from "../observability/log-event";
import type { RecordInput } from "../store/tree/record";
import type { HotCache } from "./lookup/isolate-cache";
import type { ColoCache } from "./lookup/colo-cache";
import type { ChildlessMemory } from "./lookup/childless";
import type { Claim, Joined } from "../store/objects/single-flight";
import type { TreeWriter } from "../store/objects/tree-writer";
import { withTimeout } from "./lookup/read-through";

/**
 * Single flight through the tree's object. Reaching it is bounded by
 * LOOKUP_TIMEOUT_MS; waiting for another request's generation by
 * SINGLE_FLIGHT_WAIT_MS. Throws when either runs out (the caller steps aside).
 */
export async function claimOf(writer: DurableObjectStub<TreeWriter>, key: string, config: Config): Promise<Claim> {
  // SAFETY: RPC types a union result as a stub; Joined is plain data (structured clone), so the cast only unwraps that type.
  const joined = await withTimeout(writer.join(key) as unknown as Promise<Joined>, config.lookupTimeoutMs, "single-flight join");
  return claimFrom(writer, key, joined, config);
}

/**
 * The claim a join gave (here or in TreeWriter.lookupOrJoin): at once, or,
 * when another request leads, after waiting for it (bounded by
 * SINGLE_FLIGHT_WAIT_MS; throws when that runs out).
 */
export async function claimFrom(writer: DurableObjectStub<TreeWriter>, key: string, joined: Joined, config: Config): Promise<Claim> {
  if (joined.role !== "waiting") return joined;
  // SAFETY: RPC types a union result as a stub; Claim is plain data (a StoredAnswer at most).
  return withTimeout(writer.follow(key) as unknown as Promise<Claim>, config.singleFlightWaitMs, "single-flight wait");
}

/**
 * Settles a generation through the tree's object (both APIs): records it, which
 * also serves the waiting followers, and drops this isolate's hot entry; or,
 * when nothing could be recorded, releases the claim. `afterRecord` runs after
 * a recording (template learning). Never throws: a failure is logged and the
 * claim released (a no-op when the object already ended the flight).
 */
export async function settleGeneration(opts: {
  writer: DurableObjectStub<TreeWriter>;
  treeId: string;
  key: string;
  token: string | undefined;
  hot: HotCache;
  /** This colo's Cache API layer, when on: a recording forgets its entry at once, like the isolate's memory. */
  colo?: ColoCache | null;
  /** This isolate's childless leaves: the recording's path is forgotten, its answer remembered when the batch inserted it. */
  childless?: ChildlessMemory;
  recording: RecordInput | null;
  afterRecord?: (recording: RecordInput) => Promise<void>;
}): Promise<void> {
  try {
    if (opts.recording) {
      const sentAt = Date.now();
      const outcome = await opts.writer.record(opts.recording, opts.key, opts.token);
      opts.hot.delete(opts.key);
      const path = opts.recording.path.map((p) => p.hash);
      opts.childless?.recorded(path, opts.recording.answer.hash, outcome.answerIsNew === true, sentAt);
      await opts.colo?.delete(opts.key).catch(() => undefined);
      // The recording has landed: a failure after it (declared evidence, the learner's queue) is not a failed record.
      await opts.afterRecord?.(opts.recording).catch((error: unknown) => logEvent("error", "after_record_failed", { tree: opts.treeId, error: String(error) }));
    } else if (opts.token) {
      await opts.writer.release(opts.key, opts.token);
    }
  } catch (error) {
    logEvent("error", "record_failed", { tree: opts.treeId, error: String(error) });
    // The record never reached the object (or failed after it ended the flight): release, so no one waits out the lease.
    if (opts.token) await opts.writer.release(opts.key, opts.token).catch(() => undefined);
  }
}
