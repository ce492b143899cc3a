import { newApp } from "./app";
import { parseLogLevel } from "./observability/log";
import { withLogContext } from "./observability/log-event";
import { scheduledPrune } from "./store/prune-runner";

export { TreeWriter } from "./store/tree-writer";
export { HitTally } from "./store/hit-tally";

const app = newApp();

export default {
  fetch: app.fetch,
  /** The cron trigger: prune paths not hit within PRUNE_TTL_MS (the same code as POST /api/prune). */
  scheduled: (_controller, env, ctx) => ctx.waitUntil(withLogContext({ level: parseLogLevel(env.LOG_LEVEL) }, () => scheduledPrune(env))),
} satisfies ExportedHandler<Env>;
