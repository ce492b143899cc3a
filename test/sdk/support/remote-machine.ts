/**
 * One "machine" of the two-process test (test/sdk/remote.worker-e2e.test.ts): an engine
 * whose store is the Worker, run as its own process. It prints one JSON line per tool
 * call (the tool name and its arguments as JSON text) and a last line with the report.
 *
 *   tsx test/sdk/support/remote-machine.ts <baseUrl> <namespace> <token> [tenant]
 */
import { Engine, RemoteStore } from "../../../sdk/src/index.js";

const [baseUrl, namespace, token, tenant] = process.argv.slice(2);
const engine = new Engine<{ order: string }>({
  store: new RemoteStore({ baseUrl, namespace, token, tenant: tenant || undefined }),
  onWarning: (w) => console.error(`warning ${w.kind}: ${w.message}`),
});
const calls: string[] = [];
const log = (tool: string, args: unknown[]) => calls.push(JSON.stringify({ tool, args: JSON.stringify(args) }));
const post = engine.function({ name: "post", version: "1" }, (path: string, body: Record<string, unknown>) => {
  log("post", [path, body]);
  return 201;
});
const wait = engine.function({ name: "wait", version: "1" }, async (ms: number) => {
  log("wait", [ms]);
  await new Promise((r) => setTimeout(r, ms));
});
let agentRuns = 0;
engine
  .setAgent(async (_task, { params }) => {
    agentRuns++;
    post("/orders", { zeta: "last key first", alpha: { nested: [3, { y: 1, x: null }] }, order: params.order, ünï: "😀", n: -0.5e-7 });
    await wait(1);
    post("/orders/confirm", { id: params.order, flags: [true, false] });
  })
  .finalize();

const report = await engine.run("place the order", { tags: ["place-order"], params: { order: "A-17" } });
for (const call of calls) console.log(call);
console.log(JSON.stringify({ report, agentRuns }));
