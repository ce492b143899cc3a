import type { WorkloadRequest } from "./workloads";
import { answerIndex } from "./workloads";
import type { ChatBody, ScriptReply } from "./scripted-model";

/** A scripted-model script that answers each workload request with its recorded answer. */
export function replayScript(requests: WorkloadRequest[]): (body: ChatBody) => ScriptReply {
  const index = answerIndex(requests);
  return (body) => {
    const answer = index.get(JSON.stringify({ model: body.model, messages: body.messages }));
    if (!answer) return { status: 404, body: { error: { message: "replay: unknown request", type: "invalid_request_error", code: "unknown_request" } } };
    // The recorded message as the model sent it: content "" stays "", other fields ride along.
    return { ...(answer as object), role: "assistant", content: (answer.content as string | null) ?? null } as ScriptReply;
  };
}

export interface PassResult {
  requests: number;
  outcomes: Record<string, number>;
  /** Served answers that differ from the expected ones (content or tool calls, exact text). */
  mismatches: number;
  /** The signature of each served answer, by request index. */
  served: string[];
  /** Each served message and its outcome, by request index. */
  messages: Array<Record<string, unknown>>;
  outcomeOf: string[];
  /** Served messages that differ from their reference field by field, ids aside (see fidelityDiffs), with a few examples. */
  fidelity: { mismatches: number; examples: string[] };
  errors: number;
  wallMs: number;
  requestBytes: number;
}

/** An answer's content and tool calls (names and exact argument text), ids aside. */
export function signature(answer: { content?: unknown; tool_calls?: unknown }): string {
  const calls = ((answer.tool_calls as Array<{ function: { name: string; arguments: string } }> | undefined) ?? []).map(
    (c) => `${c.function.name}:${c.function.arguments}`,
  );
  const text = typeof answer.content === "string" ? answer.content : null;
  return JSON.stringify([text, calls]);
}

const OWN_FIELDS = new Set(["role", "content", "tool_calls"]);
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * How a served message differs from the recorded one, field by field, ids
 * aside: content exactly (`""` is not null; absent is null), each tool call's
 * type, name and argument text exactly, every other recorded field equal, and
 * no field added unless it is null or empty (what the scripted model adds).
 */
export function fidelityDiffs(recorded: Record<string, unknown>, served: Record<string, unknown>): string[] {
  const diffs: string[] = [];
  if ((recorded.content ?? null) !== (served.content ?? null)) diffs.push("content");
  const rc = (recorded.tool_calls as Array<{ type?: string; function: { name: string; arguments: string } }> | undefined) ?? [];
  const sc = (served.tool_calls as typeof rc | undefined) ?? [];
  if (rc.length !== sc.length) diffs.push("tool_calls.length");
  else
    rc.forEach((call, i) => {
      if (call.function.name !== sc[i].function.name) diffs.push(`tool_calls[${i}].name`);
      if (call.function.arguments !== sc[i].function.arguments) diffs.push(`tool_calls[${i}].arguments`);
      if ((call.type ?? "function") !== (sc[i].type ?? "function")) diffs.push(`tool_calls[${i}].type`);
    });
  for (const [k, v] of Object.entries(recorded)) if (!OWN_FIELDS.has(k) && v !== undefined && !same(v, served[k])) diffs.push(k);
  for (const [k, v] of Object.entries(served)) {
    if (OWN_FIELDS.has(k) || k in recorded || v === null || (Array.isArray(v) && v.length === 0)) continue;
    diffs.push(`+${k}`);
  }
  return diffs;
}

/**
 * Sends every request through the proxy at `baseUrl` (concurrently across
 * requests) and checks each answer against `expected` signatures (default:
 * the recorded answers), and field by field against its reference: the
 * recorded message, or with `reference` (an earlier pass) the message that
 * pass served where it was not a miss (a request identical to an earlier one
 * up to ids is served that earlier answer).
 */
export async function replayPass(
  baseUrl: string,
  requests: WorkloadRequest[],
  opts: { key: string; namespace: string; concurrency?: number; expected?: string[]; reference?: PassResult },
): Promise<PassResult> {
  const result: PassResult = {
    requests: requests.length,
    outcomes: {},
    mismatches: 0,
    served: [],
    messages: [],
    outcomeOf: [],
    fidelity: { mismatches: 0, examples: [] },
    errors: 0,
    wallMs: 0,
    requestBytes: 0,
  };
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
      result.outcomeOf[index] = outcome;
      if (!res.ok) {
        result.errors++;
        await res.arrayBuffer();
        continue;
      }
      const json = (await res.json()) as { choices: Array<{ message: Record<string, unknown> }> };
      const message = json.choices[0].message;
      result.served[index] = signature(message);
      result.messages[index] = message;
      if (result.served[index] !== expected[index]) result.mismatches++;
      const ref = opts.reference && opts.reference.outcomeOf[index] !== "miss" ? opts.reference.messages[index] : (request.answer as Record<string, unknown>);
      const diffs = fidelityDiffs(ref, message);
      if (diffs.length > 0) {
        result.fidelity.mismatches++;
        if (result.fidelity.examples.length < 5) result.fidelity.examples.push(`${request.trajectory} #${index}: ${diffs.join(", ")}`);
      }
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency ?? 8 }, worker));
  result.wallMs = performance.now() - started;
  return result;
}
