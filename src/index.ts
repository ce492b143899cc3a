import { newApp } from "./app";
import { configOf } from "./config";
import { forgetAnswers } from "./isolate";
import { withLogContext } from "./observability/log-event";
import { scheduledPrune } from "./store/prune-runner";

export { TreeWriter } from "./store/tree-writer";
export { TreeLearner } from "./store/tree-learner";
export { HitTally } from "./store/hit-tally";

const app = newApp();

export default {
  fetch: app.fetch,
  /** The cron trigger: prune paths not hit within PRUNE_TTL_MS (the same code as POST /api/prune). */
  scheduled: (_controller, env, ctx) => {
    const config = configOf(env);
    ctx.waitUntil(withLogContext({ level: config.logLevel }, () => scheduledPrune(env, config.pruneTtlMs, (keys) => forgetAnswers(config, keys))));
  },
} satisfies ExportedHandler<Env>;
