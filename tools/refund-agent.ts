import type OpenAI from "openai";
import { REFUND_TOOLS } from "./refund-desk";

/** An order in the refund agent's little world. */
export interface Order {
  order_id: string;
  status: string;
  amount: number;
}

export interface AgentRun {
  /** The cache outcome of each model call (`muscle-mem-cache`). */
  outcomes: string[];
  /** Each model call's `muscle-mem-template` header: which template served its hit (`learned:…`, `declared`), or "". */
  templates: string[];
  /** What the tools did, in order: the observable effects of the run. */
  effects: string[];
  final: string;
}

type Message = OpenAI.ChatCompletionMessageParam;
type Assistant = { content: string | null; tool_calls?: Array<{ id: string; type: "function"; function: { name: string; arguments: string } }> };

async function callStreamed(
  client: OpenAI,
  body: OpenAI.ChatCompletionCreateParamsNonStreaming,
  headers: Record<string, string>,
): Promise<{ message: Assistant; outcome: string; template: string }> {
  const { data, response } = await client.chat.completions
    .create({ ...body, stream: true, stream_options: { include_usage: true } }, { headers })
    .withResponse();
  let content: string | null = null;
  const calls: NonNullable<Assistant["tool_calls"]> = [];
  for await (const chunk of data) {
    const delta = chunk.choices[0]?.delta;
    if (!delta) continue;
    if (delta.content) content = (content ?? "") + delta.content;
    for (const call of delta.tool_calls ?? []) {
      const slot = (calls[call.index] ??= { id: "", type: "function", function: { name: "", arguments: "" } });
      if (call.id) slot.id = call.id;
      if (call.function?.name) slot.function.name += call.function.name;
      if (call.function?.arguments) slot.function.arguments += call.function.arguments;
    }
  }
  return {
    message: { content, tool_calls: calls.length ? calls : undefined },
    outcome: response.headers.get("muscle-mem-cache") ?? "none",
    template: response.headers.get("muscle-mem-template") ?? "",
  };
}

/**
 * A small refund agent driven by the official `openai` client: it asks the
 * model, runs the tools it calls against `orders`, and loops until the model
 * answers in text. Works streamed or not.
 */
export async function runRefundAgent(
  client: OpenAI,
  orderId: string,
  orders: Record<string, Order>,
  opts: { stream?: boolean; model?: string; headers?: Record<string, string> } = {},
): Promise<AgentRun> {
  const messages: Message[] = [
    { role: "system", content: "You are a refund desk agent. Look orders up before refunding." },
    { role: "user", content: `Hi, please refund order #${orderId}.` },
  ];
  const run: AgentRun = { outcomes: [], templates: [], effects: [], final: "" };
  const headers = opts.headers ?? {};
  for (let turn = 0; turn < 8; turn++) {
    const body = { model: opts.model ?? "gpt-4o-mini", messages, tools: REFUND_TOOLS as unknown as OpenAI.ChatCompletionTool[] };
    let message: Assistant;
    if (opts.stream) {
      const streamed = await callStreamed(client, body, headers);
      message = streamed.message;
      run.outcomes.push(streamed.outcome);
      run.templates.push(streamed.template);
    } else {
      const { data, response } = await client.chat.completions.create(body, { headers }).withResponse();
      const m = data.choices[0].message;
      message = { content: m.content, tool_calls: m.tool_calls?.filter((c) => c.type === "function") };
      run.outcomes.push(response.headers.get("muscle-mem-cache") ?? "none");
      run.templates.push(response.headers.get("muscle-mem-template") ?? "");
    }
    messages.push({ role: "assistant", content: message.content, ...(message.tool_calls ? { tool_calls: message.tool_calls } : {}) });
    if (!message.tool_calls?.length) {
      run.final = message.content ?? "";
      return run;
    }
    for (const call of message.tool_calls) {
      const args = JSON.parse(call.function.arguments) as { order_id: string; amount?: number };
      let result: unknown;
      if (call.function.name === "get_order") {
        result = orders[args.order_id] ?? { order_id: args.order_id, status: "missing" };
        run.effects.push(`get_order ${args.order_id}`);
      } else {
        orders[args.order_id] = { ...orders[args.order_id], status: "refunded" };
        result = { order_id: args.order_id, refunded: true };
        run.effects.push(`refund ${args.order_id} ${args.amount}`);
      }
      messages.push({ role: "tool", tool_call_id: call.id, content: JSON.stringify(result) });
    }
  }
  throw new Error("agent did not finish in 8 turns");
}
