import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { readBody } from "./scripted-anthropic";

/** An input or output item as the scripted Responses model reads and writes it. */
export type ResponsesItem = Record<string, unknown> & { type?: string; role?: string };

export interface ResponsesModelBody {
  model: string;
  input: string | ResponsesItem[];
  instructions?: string;
  tools?: unknown[];
  stream?: boolean;
  [key: string]: unknown;
}

/** What a script answers: output items (text or function calls), or a raw HTTP error. */
export type ResponsesReply = { output: Array<{ text: string } | { call: string; args: Record<string, unknown> }> } | { status: number; body: unknown };

let nextId = 0;
const freshId = (prefix: string) => `${prefix}_${Date.now().toString(36)}${(nextId++).toString(36).padStart(6, "0")}`;

/**
 * The refund desk as a Responses model: it looks the order up, refunds it if
 * it was delivered, and otherwise explains why not. `call_id`s and item ids
 * are fresh on every generation, as real models' are.
 */
export function responsesRefundDesk(body: ResponsesModelBody): ResponsesReply {
  const items: ResponsesItem[] = typeof body.input === "string" ? [{ role: "user", content: body.input }] : body.input;
  const last = items[items.length - 1];
  if (last.type === "function_call_output") {
    const data = JSON.parse(String(last.output)) as { order_id?: string; status?: string; amount?: number; refunded?: boolean };
    if (data.refunded) return { output: [{ text: `Done: order ${data.order_id} was refunded.` }] };
    if (data.status === "delivered") return { output: [{ call: "refund", args: { order_id: data.order_id, amount: data.amount } }] };
    return { output: [{ text: `Order ${data.order_id} is ${data.status ?? "missing"}, so it cannot be refunded yet.` }] };
  }
  const text = typeof last.content === "string" ? last.content : JSON.stringify(last.content ?? "");
  const orderId = /#?([A-Z]-\d+)/.exec(text)?.[1] ?? "unknown";
  return { output: [{ text: "Let me look that order up." }, { call: "get_order", args: { order_id: orderId } }] };
}

function outputItems(reply: Extract<ResponsesReply, { output: unknown }>): ResponsesItem[] {
  return reply.output.map((out) =>
    "text" in out
      ? {
          id: freshId("msg"),
          type: "message",
          status: "completed",
          role: "assistant",
          content: [{ type: "output_text", text: out.text, annotations: [], logprobs: [] }],
        }
      : { id: freshId("fc"), type: "function_call", status: "completed", call_id: freshId("call"), name: out.call, arguments: JSON.stringify(out.args) },
  );
}

function responseOf(body: ResponsesModelBody, id: string, status: string, output: ResponsesItem[]) {
  const usage = {
    input_tokens: Math.ceil(JSON.stringify(body.input).length / 4),
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 9,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 0,
  };
  usage.total_tokens = usage.input_tokens + usage.output_tokens;
  return {
    id,
    object: "response",
    created_at: Math.floor(Date.now() / 1000),
    status,
    model: body.model,
    output,
    parallel_tool_calls: true,
    tools: body.tools ?? [],
    usage: status === "completed" ? usage : null,
  };
}

/** Writes the real event sequence of a response, text and arguments in small deltas. */
function writeEvents(res: ServerResponse, body: ResponsesModelBody, id: string, items: ResponsesItem[], chunk: number): void {
  let seq = 0;
  const send = (type: string, data: Record<string, unknown>) =>
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`);
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  send("response.created", { response: responseOf(body, id, "in_progress", []) });
  send("response.in_progress", { response: responseOf(body, id, "in_progress", []) });
  items.forEach((item, output_index) => {
    const item_id = item.id;
    if (item.type === "function_call") {
      const args = String(item.arguments);
      send("response.output_item.added", { output_index, item: { ...item, status: "in_progress", arguments: "" } });
      for (let i = 0; i < args.length; i += chunk) send("response.function_call_arguments.delta", { item_id, output_index, delta: args.slice(i, i + chunk) });
      send("response.function_call_arguments.done", { item_id, output_index, arguments: args });
    } else {
      const part = (item.content as Array<{ text: string }>)[0];
      send("response.output_item.added", { output_index, item: { ...item, status: "in_progress", content: [] } });
      send("response.content_part.added", { item_id, output_index, content_index: 0, part: { ...part, text: "" } });
      for (let i = 0; i < part.text.length; i += chunk)
        send("response.output_text.delta", { item_id, output_index, content_index: 0, delta: part.text.slice(i, i + chunk), logprobs: [] });
      send("response.output_text.done", { item_id, output_index, content_index: 0, text: part.text, logprobs: [] });
      send("response.content_part.done", { item_id, output_index, content_index: 0, part });
    }
    send("response.output_item.done", { output_index, item });
  });
  send("response.completed", { response: responseOf(body, id, "completed", items) });
  res.end();
}

function writeJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

export interface ScriptedResponsesModel {
  /** The base URL to use as `UPSTREAM_BASE_URL` (ends in `/v1`). */
  url: string;
  /** Generations answered so far (errors excluded). */
  generations: () => number;
  /** Every request received: its body and headers. */
  requests: Array<{ body: ResponsesModelBody; headers: IncomingMessage["headers"] }>;
  close: () => Promise<void>;
}

/** Starts a scripted Responses API server on loopback (`POST /v1/responses`, JSON or its event stream). */
export async function startScriptedResponsesModel(options: {
  script: (body: ResponsesModelBody) => ResponsesReply;
  chunkChars?: number;
  port?: number;
}): Promise<ScriptedResponsesModel> {
  let generations = 0;
  const requests: ScriptedResponsesModel["requests"] = [];
  const server: Server = createServer(async (req, res) => {
    try {
      if (req.method !== "POST" || !req.url?.endsWith("/responses"))
        return writeJson(res, 404, { error: { message: `no route ${req.method} ${req.url}`, type: "invalid_request_error", code: null, param: null } });
      const body = JSON.parse(await readBody(req)) as ResponsesModelBody;
      requests.push({ body, headers: req.headers });
      const reply = options.script(body);
      if ("status" in reply) return writeJson(res, reply.status, reply.body);
      generations++;
      const id = freshId("resp");
      const items = outputItems(reply);
      if (body.stream) return writeEvents(res, body, id, items, options.chunkChars ?? 7);
      writeJson(res, 200, responseOf(body, id, "completed", items));
    } catch (error) {
      writeJson(res, 500, { error: { message: `scripted responses model failed: ${String(error)}`, type: "server_error", code: null, param: null } });
    }
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    generations: () => generations,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
