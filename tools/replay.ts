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
  /** Served answers that differ from the expected ones (content or tool calls, exact text). */
  mismatches: number;
  /** The signature of each served answer, by request index. */
  served: string[];
  errors: number;
  wallMs: number;
  requestBytes: number;
}

/** An answer's content and tool calls (names and exact argument text), ids aside. */
export function signature(answer: { content?: unknown; tool_calls?: unknown }): string {
  const calls = ((answer.tool_calls as Array<{ function: { name: string; arguments: string } }> | undefined) ?? []).map((c) => `${c.function.name}:${c.function.arguments}`);
  const text = typeof answer.content === "string" && answer.content !== "" ? answer.content : null;
  return JSON.stringify([text, calls]);
}

/**
 * Sends every request through the proxy at `baseUrl` (concurrently across
 * requests) and checks each answer against `expected` signatures (default:
 * the recorded answers).
 */
export async function replayPass(baseUrl: string, requests: WorkloadRequest[], opts: { key: string; namespace: string; concurrency?: number; expected?: string[] }): Promise<PassResult> {
  const result: PassResult = { requests: requests.length, outcomes: {}, mismatches: 0, served: [], errors: 0, wallMs: 0, requestBytes: 0 };
  const expected = opts.expected ?? requests.map((r) => signature(r.answer));
  const started = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < requests.length) {
      const index = next++;
      const request = requests[index];
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
      const json = (await res.json()) as { choices: Array<{ message: { content?: unknown; tool_calls?: unknown } }> };
      result.served[index] = signature(json.choices[0].message);
      if (result.served[index] !== expected[index]) result.mismatches++;
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency ?? 8 }, worker));
  result.wallMs = performance.now() - started;
  return result;
}
