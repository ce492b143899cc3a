import { newApp } from "./http/app";
import { servicesOf } from "./engine/services";
import { withLogContext } from "./observability/log-event";
import { scheduledPrune } from "./store/prune/runner";

export { TreeWriter } from "./store/objects/tree-writer";
export { TreeLearner } from "./store/objects/tree-learner";
export { HitTally } from "./store/objects/hit-tally";

const app = newApp();

export default {
  fetch: app.fetch,
  /** The cron trigger: the directory backfill, and arming each tree's stale-prune alarm (PRUNE_TTL_MS), a bounded number of trees a run. */
  scheduled: (_controller, env, ctx) => {
    const { config } = servicesOf(env);
    ctx.waitUntil(withLogContext({ level: config.logLevel }, () => scheduledPrune(env, config.pruneTtlMs)));
  },
} satisfies ExportedHandler<Env>;
