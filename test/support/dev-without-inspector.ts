/**
 * `wrangler dev` without its DevTools inspector, through wrangler's own API
 * (`unstable_startWorker` with `dev.inspector: false`): the same local runtime,
 * bindings and state as the CLI, minus the inspector proxy that the CLI always
 * attaches (it turns on the DevTools network domain, so every subrequest becomes
 * events relayed to wrangler's Node process). For benchmarks that separate the
 * Worker's own cost from that relay; the Worker's console output is not shown.
 * Started by test/support/wrangler-dev.ts (`inspector: false`):
 *
 *   tsx test/support/dev-without-inspector.ts <wrangler.toml> <port> <state dir> <log level> <vars as JSON>
 */
import { unstable_startWorker } from "wrangler";

const [config, port, persist, logLevel, varsJson] = process.argv.slice(2);
const vars = JSON.parse(varsJson ?? "{}") as Record<string, string>;
const worker = await unstable_startWorker({
  config,
  bindings: Object.fromEntries(Object.entries(vars).map(([name, value]) => [name, { type: "plain_text" as const, value }])),
  dev: {
    inspector: false,
    server: { hostname: "127.0.0.1", port: Number(port) },
    persist,
    logLevel: logLevel as "debug" | "info" | "log" | "warn" | "error",
    watch: false,
    liveReload: false,
  },
});
await worker.ready;
console.log(`ready on ${String(worker.url)}`);
const stop = (): void => {
  void worker.dispose().finally(() => process.exit(0));
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
