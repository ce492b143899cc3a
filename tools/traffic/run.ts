import { runCase, type Chat, type RunResult, type ServedBy } from "../eval-workflows/run";
import { intake } from "../eval-workflows/intake";
import { refundDesk } from "../eval-workflows/refund";
import { seeded, type Workflow } from "../eval-workflows/types";
import { replayPass } from "../replay";
import type { ScriptedModel } from "../scripted-model";
import type { WorkloadRequest } from "../workloads";
import { ORDER_DESK_MODEL, PROBE_MODEL, TRAFFIC_MODEL_URL } from "./model";
import { orderDesk } from "./order-desk";

/** The bearer key the traffic sends: its own tenant, so its trees are easy to tell apart in the dashboard. */
export const TRAFFIC_KEY = "sk-muscle-mem-traffic";

/** Whether the Worker at `workerUrl` sends its misses to `model`, and if not, what to tell the user. */
export async function probe(workerUrl: string, model: ScriptedModel): Promise<{ ok: true } | { ok: false; problem: string }> {
  const restart = `Stop it and start it pointed at the scripted model (the same local state as npm start):\n\n  npm run start:demo\n\n(that is: npm start -- --var UPSTREAM_BASE_URL:${TRAFFIC_MODEL_URL})`;
  let health: unknown = null;
  try {
    const res = await fetch(`${workerUrl}/healthz`);
    health = res.ok ? await res.json() : null;
  } catch {
    health = null;
  }
  if ((health as { service?: unknown } | null)?.service !== "muscle-mem") {
    return {
      ok: false,
      problem: `No muscle-mem Worker answers at ${workerUrl}. Start one first:\n\n  npm run start:demo\n\n(or pass --url http://HOST:PORT of the one you started)`,
    };
  }
  const nonce = `probe-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  const res = await fetch(`${workerUrl}/v1/chat/completions`, {
    method: "POST",
    // no-store: the probe asks the model and nothing is recorded.
    headers: { "content-type": "application/json", authorization: `Bearer ${TRAFFIC_KEY}`, "cache-control": "no-store" },
    body: JSON.stringify({ model: PROBE_MODEL, messages: [{ role: "user", content: nonce }] }),
  });
  const text = await res.text();
  if (model.requests.some((r) => JSON.stringify(r.messages).includes(nonce))) return { ok: true };
  const answer = res.status === 200 ? "it answered from another model" : `it answered ${res.status}: ${text.slice(0, 300)}`;
  return { ok: false, problem: `The Worker at ${workerUrl} does not send its misses to the scripted model at ${model.url} (${answer}).\n${restart}` };
}

/** What one part of the traffic did. */
export interface TrafficPart {
  name: string;
  namespace: string;
  requests: number;
  served: Record<ServedBy, number>;
  /** Answers that differ from what the model alone answers (must be 0). */
  wrong: number;
}

function tally(name: string, namespace: string, runs: RunResult[]): TrafficPart {
  const served: Record<ServedBy, number> = { model: 0, exact: 0, declared: 0, learned: 0 };
  for (const r of runs) for (const k of Object.keys(served) as ServedBy[]) served[k] += r.served[k];
  return { name, namespace, requests: runs.reduce((n, r) => n + r.steps, 0), served, wrong: runs.reduce((n, r) => n + r.wrong, 0) };
}

/**
 * An agent's day on one workflow: one case of each ordinary kind (the branches), `more` cases of the
 * commonest kind (new customers: learned templates confirm after TEMPLATE_MIN_BINDINGS of them, then
 * serve), one case of each trap (values the templates must not serve), and two repeats (exact hits).
 */
async function workflowDay<C>(wf: Workflow<C>, model: string, namespace: string, chat: Chat, seed: number, more: number): Promise<TrafficPart> {
  const rng = seeded(seed);
  const headers = { authorization: `Bearer ${TRAFFIC_KEY}`, "muscle-mem-namespace": namespace };
  const common = wf.kinds[0][0];
  const cases = [...wf.kinds.map(([kind]) => kind), ...new Array<string>(more).fill(common), ...wf.traps].map((kind) => wf.makeCase(rng, kind));
  const runs: RunResult[] = [];
  for (const c of [...cases, cases[0], cases[wf.kinds.length]]) runs.push(await runCase(wf, c, chat, { model, headers, declare: false }));
  return tally(wf.name, namespace, runs);
}

/** Refund requests whose client declares the customer's values (`muscle-mem-bindings`): misses until DECLARED_MIN_BINDINGS customers got the same answers, then declared hits. */
async function declaredDay(chat: Chat, seed: number): Promise<TrafficPart> {
  const rng = seeded(seed + 1);
  const namespace = "refund-desk-declared";
  const headers = { authorization: `Bearer ${TRAFFIC_KEY}`, "muscle-mem-namespace": namespace };
  const runs: RunResult[] = [];
  for (let i = 0; i < 5; i++)
    runs.push(await runCase(refundDesk, refundDesk.makeCase(rng, "delivered"), chat, { model: "wf-refund-desk", headers, declare: true }));
  return tally(`${refundDesk.name} (declared bindings)`, namespace, runs);
}

/** Recorded tau-bench and tau2-bench conversations, twice: the first pass records them, the second is served. */
async function replayDay(workerUrl: string, workloads: WorkloadRequest[]): Promise<TrafficPart> {
  const opts = { key: TRAFFIC_KEY, namespace: "tau-bench", concurrency: 4 };
  const first = await replayPass(workerUrl, workloads, opts);
  const second = await replayPass(workerUrl, workloads, { ...opts, expected: first.served });
  if (first.errors + second.errors > 0)
    throw new Error(
      `tau-bench replay: ${first.errors + second.errors} requests failed (${JSON.stringify(first.outcomes)}, ${JSON.stringify(second.outcomes)})`,
    );
  const hits = (first.outcomes.hit ?? 0) + (second.outcomes.hit ?? 0);
  const served = { model: first.requests + second.requests - hits, exact: hits, declared: 0, learned: 0 };
  return { name: "tau-bench replays (x2)", namespace: opts.namespace, requests: first.requests + second.requests, served, wrong: second.mismatches };
}

/** Sends the whole traffic through the Worker at `workerUrl`, whose upstream must be the traffic's model. */
export async function sendTraffic(
  workerUrl: string,
  workloads: WorkloadRequest[],
  opts: { seed?: number; onPart?: (part: TrafficPart) => void } = {},
): Promise<TrafficPart[]> {
  const seed = opts.seed ?? 1;
  const chat: Chat = (body, headers) =>
    fetch(`${workerUrl}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  const parts: TrafficPart[] = [];
  const done = (part: TrafficPart) => {
    parts.push(part);
    opts.onPart?.(part);
  };
  done(await workflowDay(orderDesk, ORDER_DESK_MODEL, "order-desk", chat, seed, 6));
  done(await workflowDay(intake, "wf-intake-form", "signup-intake", chat, seed, 2));
  done(await declaredDay(chat, seed));
  done(await replayDay(workerUrl, workloads));
  return parts;
}
