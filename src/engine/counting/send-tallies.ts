import { logEvent } from "../../observability/log-event";
import type { TallyBatch } from "../../store/tree/tally-batch";
import { hitTallyOf } from "../../store/objects/tree-objects";

/**
 * Sends each tree's tally to its HitTally object (one call per tree, all at
 * once). A failed call drops that tree's counts: statistics, never correctness.
 */
export async function sendTallies(env: Env, tallies: readonly TallyBatch[], flushMs: number): Promise<void> {
  const sent = await Promise.allSettled(tallies.map((tally) => hitTallyOf(env, tally.treeId).add(tally, flushMs)));
  const failed = sent.filter((s) => s.status === "rejected").length;
  if (failed > 0) logEvent("error", "tally_send_failed", { trees: failed });
}
