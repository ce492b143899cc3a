import { exports } from "cloudflare:workers";
import { eventually } from "./helpers";

/** POSTs a Responses body to the Worker with a key (or none) and extra headers. */
export function responses(body: unknown, init: { key?: string | null; headers?: Record<string, string> } = {}): Promise<Response> {
  const auth: Record<string, string> = init.key === null ? {} : { authorization: `Bearer ${init.key ?? "sk-resp-default"}` };
  return exports.default.fetch(
    new Request("http://mm.test/v1/responses", {
      method: "POST",
      headers: { "content-type": "application/json", ...auth, ...init.headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    }),
  );
}

/** Waits until the Worker has recorded an answer for the body (only-if-cached answers 200). */
export async function recordedResponse(body: unknown, init: { key?: string; headers?: Record<string, string> } = {}): Promise<void> {
  await eventually(async () => {
    const res = await responses(body, { ...init, headers: { ...init.headers, "cache-control": "only-if-cached" } });
    await res.arrayBuffer();
    return res.status === 200;
  });
}

/**
 * Records a two-turn conversation with a function the client runs itself (as
 * @openai/agents does): the model answers the first request; the second sends
 * that answer back with a user message, the client's `function_call` and its
 * `function_call_output` (call id `call_client1`), and the model answers again.
 */
export async function recordClientCall(first: { model: string; tools: unknown[]; input: Array<Record<string, unknown>> }, key: string) {
  const turn1 = (await (await responses(first, { key })).json()) as { output: Array<Record<string, unknown>> };
  await recordedResponse(first, { key });
  const second = {
    ...first,
    input: [
      ...first.input,
      ...turn1.output,
      { role: "user", content: "Look it up." },
      { type: "function_call", id: "fc_client1", call_id: "call_client1", name: "get_order", arguments: '{"order_id":"A-1"}', status: "completed" },
      { type: "function_call_output", call_id: "call_client1", output: '{"status":"delivered"}' },
    ],
  };
  await (await responses(second, { key })).arrayBuffer();
  await recordedResponse(second, { key });
  return second;
}

/** The `data:` objects of an event stream, in order. */
export function eventsOf(text: string): Array<{ type: string; [k: string]: unknown }> {
  return text
    .split("\n\n")
    .map((block) => block.split("\n").find((line) => line.startsWith("data: ")))
    .filter((line): line is string => line !== undefined)
    .map((line) => JSON.parse(line.slice(6)) as { type: string });
}
