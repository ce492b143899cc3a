import { readWorkload, requestsOf, type WorkloadLine, type WorkloadRequest } from "../tools/workloads";

/** A chat body as the benchmark sends it. */
export type Body = WorkloadRequest["body"];

type Message = WorkloadLine["messages"][number];

/**
 * Realistic hit bodies: distinct tau-bench airline requests (gpt-4o, the
 * 14-tool schema) whose JSON is 10-30 KB, as recorded.
 */
export function hitRequests(count: number): WorkloadRequest[] {
  const lines = readWorkload("tau_bench.jsonl").filter((l) => l.tools?.length === 14);
  const candidates = requestsOf(lines)
    .map((request) => ({ request, size: JSON.stringify(request.body).length }))
    .filter(({ size }) => size >= 10_000 && size <= 30_000)
    .sort((a, b) => a.size - b.size);
  // Evenly spread over the sizes, so that short and long conversations both count.
  const step = candidates.length / count;
  return Array.from({ length: Math.min(count, candidates.length) }, (_, i) => candidates[Math.floor(i * step)].request);
}

/** The pairs (assistant tool call, tool result) of one trajectory, in order. */
function toolTurns(line: WorkloadLine): Array<[Message, Message]> {
  const turns: Array<[Message, Message]> = [];
  line.messages.forEach((m, i) => {
    const next = line.messages[i + 1];
    const calls = m.tool_calls as Array<{ id: string }> | undefined;
    if (m.role === "assistant" && calls?.length === 1 && next?.role === "tool" && next.tool_call_id === calls[0].id) turns.push([m, next]);
  });
  return turns;
}

/**
 * Two conversations of the same frame (tools, model) and the same system
 * prompt: [system, user] and a 100-message one that continues with 49 real
 * (tool call, tool result) turns, recycled with fresh ids. `tag` makes them
 * distinct from any recorded request.
 */
export function shortAndLong(tag: string): { short: Body; long: Body } {
  const lines = readWorkload("tau_bench.jsonl").filter((l) => l.tools?.length === 14);
  const line = lines.reduce((a, b) => (toolTurns(b).length > toolTurns(a).length ? b : a));
  const [system, user] = line.messages;
  const turns = toolTurns(line);
  const head: Message[] = [system, { role: "user", content: `${String(user.content)} (${tag})` }];
  const long: Message[] = [...head];
  for (let i = 0; long.length < 100; i++) {
    const [call, result] = turns[i % turns.length];
    const id = `call_bench_${tag}_${i}`;
    const calls = call.tool_calls as Array<{ id: string; type: string; function: unknown }>;
    long.push({ ...call, tool_calls: [{ ...calls[0], id }] });
    long.push({ ...result, tool_call_id: id });
  }
  const frame = { model: line.model, tools: line.tools ?? undefined };
  return { short: { ...frame, messages: head }, long: { ...frame, messages: long } } as { short: Body; long: Body };
}

/** A realistic body whose last user message is unique, so that it misses. */
export function uniqueMiss(base: Body, tag: string): Body {
  return { ...base, messages: [...base.messages, { role: "user", content: `One more question (${tag}).` }] };
}
