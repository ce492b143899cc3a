import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";

/** One line of shared/workloads/*.jsonl. */
export interface WorkloadLine {
  id: string;
  model: string;
  tools: unknown[] | null;
  scripted_assistant_idx?: number[] | null;
  messages: Array<{ role: string; content?: unknown; tool_calls?: unknown; tool_call_id?: string; name?: string }>;
}

/** One model request a trajectory made, and the answer the model gave. */
export interface WorkloadRequest {
  trajectory: string;
  body: { model: string; tools?: unknown[]; messages: WorkloadLine["messages"] };
  answer: WorkloadLine["messages"][number];
}

/** The subset shipped in the repository (test/fixtures/workloads): the only workloads `npm test` reads. */
export const SHIPPED_WORKLOADS = resolve(import.meta.dirname, "../test/fixtures/workloads");

/** The full set beside the checkout, when it is there. */
const FULL_WORKLOADS = resolve(import.meta.dirname, "../../shared/workloads");

/**
 * The workloads folder for scripts and benchmarks: MM_WORKLOADS_DIR when set, else the full set in
 * ../shared/workloads when it exists, else the shipped subset. Tests pass SHIPPED_WORKLOADS instead.
 */
export function workloadsDir(): string {
  if (process.env.MM_WORKLOADS_DIR) return resolve(process.env.MM_WORKLOADS_DIR);
  return existsSync(resolve(FULL_WORKLOADS, "tau_bench.jsonl")) ? FULL_WORKLOADS : SHIPPED_WORKLOADS;
}

/** Reads the first `limit` lines of a workload file from `dir` (default: workloadsDir()). */
export function readWorkload(file: string, limit = Infinity, dir = workloadsDir()): WorkloadLine[] {
  const lines = readFileSync(resolve(dir, file), "utf8").split("\n").filter(Boolean);
  return lines.slice(0, limit).map((l) => JSON.parse(l) as WorkloadLine);
}

/**
 * The model requests of trajectories: assistant message i answers
 * messages[:i], except the harness's scripted turns. Duplicate requests keep
 * the first answer, as a recording proxy would.
 */
export function requestsOf(lines: WorkloadLine[]): WorkloadRequest[] {
  const seen = new Set<string>();
  const out: WorkloadRequest[] = [];
  for (const line of lines) {
    const scripted = new Set(line.scripted_assistant_idx ?? []);
    line.messages.forEach((message, i) => {
      if (message.role !== "assistant" || scripted.has(i) || i === 0) return;
      const body = { model: line.model, ...(line.tools ? { tools: line.tools } : {}), messages: line.messages.slice(0, i) };
      const key = JSON.stringify(body);
      if (seen.has(key)) return;
      seen.add(key);
      out.push({ trajectory: line.id, body, answer: message });
    });
  }
  return out;
}

/** The answer recorded for a request body, for a replaying upstream. */
export function answerIndex(requests: WorkloadRequest[]): Map<string, WorkloadRequest["answer"]> {
  return new Map(requests.map((r) => [JSON.stringify({ model: r.body.model, messages: r.body.messages }), r.answer]));
}
