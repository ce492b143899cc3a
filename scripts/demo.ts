/**
 * `npm run demo`: a scripted refund agent (the official openai client) runs
 * through muscle-mem under wrangler dev, against a local scripted model with
 * a realistic delay. No API key, no network: watch misses turn into hits, and
 * three orders teach a template that serves a fourth order's new id and amount.
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
const orders = (status: string, id = "A-1", amount = 42.5): Record<string, Order> => ({ [id]: { order_id: id, status, amount } });

async function show(title: string, status: string, stream = false, id = "A-1", amount = 42.5): Promise<void> {
  const before = model.generations();
  const started = performance.now();
  const run = await runRefundAgent(client, id, orders(status, id, amount), { stream });
  const ms = performance.now() - started;
  // A hit a template served (`muscle-mem-template`: a new order's id and amount through known behaviour) reads `template`.
  const outcomes = run.outcomes.map((outcome, i) => (outcome === "hit" && run.templates[i] ? "template" : outcome));
  console.log(`${title.padEnd(44)} ${outcomes.join(" → ").padEnd(32)} ${String(Math.round(ms)).padStart(5)} ms  model calls: ${model.generations() - before}`);
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
  await show("6. another customer, order B-2", "delivered", false, "B-2", 18);
  await show("7. and C-3", "delivered", false, "C-3", 99.9);
  await show("8. and D-4", "delivered", false, "D-4", 7.25);
  await show("9. a new order, E-5: served by a template", "delivered", false, "E-5", 61);
  console.log("Every hit replayed the recorded tool calls; only new situations went to the model.");
  console.log("After three orders, a learned template served a fourth it had never seen: its id and amount in the recorded behaviour.");
} finally {
  await dev.stop();
  await model.close();
}
