import type { Config } from "../../config";
import { logEvent } from "../../observability/log-event";
import { coloCache, forgetInColo } from "../../engine/lookup/colo-cache";
import type { PruneRequest, PruneResult } from "./prune";

/**
 * The stale prune of one tree, on its writer object's alarm
 * (`ctx.storage.setAlarm` / `alarm()` of src/store/objects/tree-writer.ts).
 *
 * - Armed when the tree is written (record, import) and PRUNE_TTL_MS > 0,
 *   if no alarm is set: checked once per object lifetime (one storage read).
 *   Trees written before alarms existed are armed by the cron's sweep
 *   (src/store/prune/sweep.ts).
 * - On the alarm: removes the paths whose answers were last hit (or recorded)
 *   more than PRUNE_TTL_MS ago, in pages serialised with the tree's writes
 *   (src/store/prune/pages.ts), then arms itself again in
 *   min(PRUNE_TTL_MS, 24 h) plus up to a tenth of that (jitter, so that trees
 *   armed together spread out).
 * - What it forgets: single flight's recent answers (the writer's `prune`),
 *   and the changed keys in the Cache API of the colo the object runs in.
 *   There is no request, so no Worker isolate's memory and no other colo is
 *   told: they stop serving a pruned answer within HOT_CACHE_TTL_MS and
 *   COLO_CACHE_TTL_MS of the page that removed it (docs/how-it-works.md, "Trust").
 */

/** The alarm runs at most this often per tree (and the TTL's length when it is shorter). */
export const PRUNE_EVERY_MS = 86_400_000;
/** A tree armed by the cron's sweep is pruned within this long (spread at random). */
export const FIRST_PRUNE_WITHIN_MS = 3_600_000;
/** Where the object keeps the id of its tree (the alarm has no request to name it). */
const TREE_KEY = "prune:tree";

/** The wait before the next prune of a tree, for PRUNE_TTL_MS `ttl`: min(ttl, 24 h) plus up to a tenth of it. */
export function nextPruneIn(ttl: number, random = Math.random()): number {
  const every = Math.min(ttl, PRUNE_EVERY_MS);
  return every + Math.floor(every * 0.1 * random);
}

export class PruneAlarm {
  /** Whether this object has checked its alarm since it started. */
  private checked = false;

  constructor(
    private readonly storage: DurableObjectStorage,
    /** The writer object's config (PRUNE_TTL_MS, COLO_CACHE_TTL_MS), parsed once in its constructor. */
    private readonly config: Pick<Config, "pruneTtlMs" | "coloCacheTtlMs">,
    private readonly prune: (request: PruneRequest) => Promise<PruneResult>,
  ) {}

  /**
   * Makes sure the tree's alarm is set (after a write: `within` unset, the
   * next prune is one interval away; the cron's sweep gives a shorter first
   * wait, and always reads the alarm). Cheap: after a write, once per object
   * lifetime; never throws.
   * Returns whether an alarm is set.
   */
  async arm(treeId: string, within?: number): Promise<boolean> {
    const ttl = this.config.pruneTtlMs;
    if (ttl <= 0) return false;
    // A write checks once per lifetime; the sweep's call always reads the alarm (one per tree and pass).
    if (this.checked && within === undefined) return true;
    this.checked = true;
    try {
      if ((await this.storage.getAlarm()) !== null) return true;
      await this.storage.put(TREE_KEY, treeId);
      await this.storage.setAlarm(Date.now() + (within === undefined ? nextPruneIn(ttl) : Math.floor(within * Math.random())));
      return true;
    } catch (error) {
      this.checked = false;
      logEvent("error", "prune_alarm_arm_failed", { tree_id: treeId, error: String(error) });
      return false;
    }
  }

  /** The alarm: prunes the tree's stale paths and arms the next run; PRUNE_TTL_MS 0 leaves it unarmed (a write arms it again). */
  async fire(now = Date.now()): Promise<void> {
    const config = this.config;
    const treeId = await this.storage.get<string>(TREE_KEY);
    if (!treeId || config.pruneTtlMs <= 0) {
      this.checked = false;
      return;
    }
    try {
      const { changedKeys, ...outcome } = await this.prune({
        kind: "stale",
        treeId,
        criteria: { cutoff: now - config.pruneTtlMs, minHits: null },
        dryRun: false,
      });
      await forgetInColo(coloCache(config.coloCacheTtlMs), changedKeys);
      if (outcome.nodes > 0)
        logEvent("info", "prune_alarm", {
          tree_id: treeId,
          ttl_ms: config.pruneTtlMs,
          nodes: outcome.nodes,
          answers: outcome.answers,
          templates: outcome.templates,
        });
    } catch (error) {
      // The next run tries again; a throw would make the platform retry at once, up to six times.
      logEvent("error", "prune_alarm_failed", { tree_id: treeId, error: String(error) });
    }
    await this.storage.setAlarm(Date.now() + nextPruneIn(config.pruneTtlMs));
    this.checked = true;
  }
}
