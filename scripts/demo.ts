/**
 * `npm run demo`: a scripted refund agent (the official openai client) runs
 * through muscle-mem under wrangler dev, against a local scripted model with
 * a realistic delay. No API key, no network: watch misses turn into hits.
 */
import OpenAI from "openai";
import { refundDeskScript } from "../tools/refund-desk";
import { runRefundAgent, type Order } from "../tools/refund-agent";
import { startScriptedModel } from "../tools/scripted-model";
import { startWranglerDev } from "../test/support/wrangler-dev";

const MODEL_DELAY_MS = 400;

const model = await startScriptedModel({ script: refundDeskScript, delayMs: MODEL_DELAY_MS });
console.log(`scripted model on ${model.url} (answers after ${MODEL_DELAY_MS} ms, like a real one)`);
const dev = await startWranglerDev({ vars: { UPSTREAM_BASE_URL: model.url } });
console.log(`muscle-mem on ${dev.url}/v1\n`);

const client = new OpenAI({ apiKey: "sk-demo-key", baseURL: `${dev.url}/v1`, maxRetries: 0 });
const orders = (status: string): Record<string, Order> => ({ "A-1": { order_id: "A-1", status, amount: 42.5 } });

async function show(title: string, status: string, stream = false): Promise<void> {
  const before = model.generations();
  const started = performance.now();
  const run = await runRefundAgent(client, "A-1", orders(status), { stream });
  const ms = performance.now() - started;
  console.log(
    `${title.padEnd(44)} ${run.outcomes.join(" → ").padEnd(26)} ${String(Math.round(ms)).padStart(5)} ms  model calls: ${model.generations() - before}`,
  );
  console.log(`${"".padEnd(44)} tools: ${run.effects.join(", ")}`);
  console.log(`${"".padEnd(44)} says: ${run.final}\n`);
  await new Promise((r) => setTimeout(r, 300));
}

try {
  await show("1. first run (the tree is empty)", "delivered");
  await show("2. the same task again", "delivered");
  await show("3. again, streamed", "delivered", true);
  await show("4. the order is only shipped: a new branch", "shipped");
  await show("5. the shipped case again", "shipped");
  console.log("Every hit replayed the recorded tool calls; only new situations went to the model.");
} finally {
  await dev.stop();
  await model.close();
}
