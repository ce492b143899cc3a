import type { WorkloadRequest } from "./workloads";
import { answerIndex } from "./workloads";
import type { ChatBody, ScriptReply } from "./scripted-model";

/** A scripted-model script that answers each workload request with its recorded answer. */
export function replayScript(requests: WorkloadRequest[]): (body: ChatBody) => ScriptReply {
  const index = answerIndex(requests);
  return (body) => {
    const answer = index.get(JSON.stringify({ model: body.model, messages: body.messages }));
    if (!answer) return { status: 404, body: { error: { message: "replay: unknown request", type: "invalid_request_error", code: "unknown_request" } } };
    return { role: "assistant", content: (answer.content as string | null) ?? null, ...(answer.tool_calls ? { tool_calls: answer.tool_calls as never } : {}) };
  };
}

export interface PassResult {
  requests: number;
  outcomes: Record<string, number>;
  /** Served answers that differ from the recorded one (content or tool calls). */
  mismatches: number;
  errors: number;
  wallMs: number;
  requestBytes: number;
}

function sameAnswer(served: { content?: string | null; tool_calls?: Array<{ function: { name: string; arguments: string } }> }, expected: WorkloadRequest["answer"]): boolean {
  // Exact text: a replay serves the arguments exactly as the model wrote them.
  const calls = (list: unknown) => ((list as Array<{ function: { name: string; arguments: string } }> | undefined) ?? []).map((c) => `${c.function.name}:${c.function.arguments}`);
  const text = (c: unknown) => (typeof c === "string" && c !== "" ? c : null);
  return text(served.content) === text(expected.content) && JSON.stringify(calls(served.tool_calls)) === JSON.stringify(calls(expected.tool_calls));
}

/**
 * Sends every request through the proxy at `baseUrl` (concurrently across
 * requests) and checks each answer against the recording.
 */
export async function replayPass(baseUrl: string, requests: WorkloadRequest[], opts: { key: string; namespace: string; concurrency?: number }): Promise<PassResult> {
  const result: PassResult = { requests: requests.length, outcomes: {}, mismatches: 0, errors: 0, wallMs: 0, requestBytes: 0 };
  const started = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < requests.length) {
      const request = requests[next++];
      const body = JSON.stringify(request.body);
      result.requestBytes += Buffer.byteLength(body);
      const res = await fetch(`${baseUrl}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${opts.key}`, "muscle-mem-namespace": opts.namespace },
        body,
      });
      const outcome = res.headers.get("muscle-mem-cache") ?? `status-${res.status}`;
      result.outcomes[outcome] = (result.outcomes[outcome] ?? 0) + 1;
      if (!res.ok) {
        result.errors++;
        await res.arrayBuffer();
        continue;
      }
      const json = (await res.json()) as { choices: Array<{ message: Parameters<typeof sameAnswer>[0] }> };
      if (!sameAnswer(json.choices[0].message, request.answer)) result.mismatches++;
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency ?? 8 }, worker));
  result.wallMs = performance.now() - started;
  return result;
}
