import { evalWorkflowScript } from "../eval-workflows/run";
import { replayScript } from "../replay";
import { startScriptedModel, type ChatBody, type ScriptReply, type ScriptedModel } from "../scripted-model";
import { readWorkload, requestsOf, SHIPPED_WORKLOADS, type WorkloadRequest } from "../workloads";
import { orderDesk } from "./order-desk";

/** Where `npm run traffic` runs its scripted model, and what `npm run start:demo` points the Worker at. */
export const TRAFFIC_MODEL_PORT = 9911;
export const TRAFFIC_MODEL_URL = `http://127.0.0.1:${TRAFFIC_MODEL_PORT}/v1`;
/** The model name of the request that checks where the Worker sends its misses. */
export const PROBE_MODEL = "muscle-mem-traffic-probe";
/** The model name of the order desk's requests (tools/traffic/order-desk.ts). */
export const ORDER_DESK_MODEL = "gpt-4o-mini";

/**
 * The recorded agent conversations the traffic replays (from the shipped subset, test/fixtures/workloads):
 * three tau-bench airline runs of gpt-4o (one tree: same prompt and tools, a branch per customer) and two
 * tau2-bench retail runs of gpt-4.1.
 */
export function trafficWorkloads(): WorkloadRequest[] {
  const airline = readWorkload("tau_bench.jsonl", 6, SHIPPED_WORKLOADS).filter((_, i) => [1, 2, 4].includes(i));
  const retail = readWorkload("tau2_bench.jsonl", 26, SHIPPED_WORKLOADS).slice(24, 26);
  return requestsOf([...airline, ...retail]);
}

/**
 * The traffic's model: the order desk (ORDER_DESK_MODEL), the scripted workflows (tools/eval-workflows)
 * by model name (`wf-refund…`, `wf-intake…`), the recorded answer for a replayed workload request, and
 * "ok" for the probe.
 */
export function trafficScript(workloads: WorkloadRequest[]): (body: ChatBody) => ScriptReply {
  const replay = replayScript(workloads);
  return (body) => {
    if (body.model === PROBE_MODEL) return { role: "assistant", content: "ok" };
    if (body.model === ORDER_DESK_MODEL) return orderDesk.script(body);
    return evalWorkflowScript(body) ?? replay(body);
  };
}

/** Starts the traffic's model on 127.0.0.1 (`port` 0: any free port), answering after `delayMs` like a real one. */
export async function startTrafficModel(opts: { port?: number; delayMs?: number } = {}): Promise<ScriptedModel> {
  return startScriptedModel({ script: trafficScript(trafficWorkloads()), port: opts.port ?? TRAFFIC_MODEL_PORT, delayMs: opts.delayMs ?? 0, chunkChars: 64 });
}
