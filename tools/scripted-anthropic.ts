import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A content block as the scripted Anthropic model reads and writes it. */
export type AnthropicBlock =
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> }
  | { type: "tool_result"; tool_use_id: string; content?: string | Array<{ type: string; text?: string }>; is_error?: boolean };

export interface AnthropicBody {
  model: string;
  max_tokens: number;
  messages: Array<{ role: "user" | "assistant"; content: string | AnthropicBlock[] }>;
  system?: unknown;
  tools?: unknown[];
  stream?: boolean;
  [key: string]: unknown;
}

/** What a script answers: the assistant's blocks (and optionally its stop reason), or a raw HTTP error. */
export type AnthropicReply = { content: AnthropicBlock[]; stop_reason?: string } | { status: number; body: unknown };

export interface AnthropicHandlerOptions {
  script: (body: AnthropicBody) => AnthropicReply | Promise<AnthropicReply>;
  /** Characters per streamed text or JSON delta. */
  chunkChars?: number;
  /** Cut the answer short: an event stream without `message_stop`, or half a JSON body. */
  truncate?: (body: AnthropicBody) => boolean;
  /** Called for every request body, before the script. */
  onRequest?: (body: AnthropicBody) => void;
}

let nextId = 0;
const freshId = (prefix: string) => `${prefix}_01${Date.now().toString(36)}${(nextId++).toString(36).padStart(4, "0")}`;

/** The tools of the refund desk, in Anthropic's format. */
export const ANTHROPIC_REFUND_TOOLS = [
  {
    name: "get_order",
    description: "Look up an order by id.",
    input_schema: { type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"] },
  },
  {
    name: "refund",
    description: "Refund an order in full.",
    input_schema: { type: "object", properties: { order_id: { type: "string" }, amount: { type: "number" } }, required: ["order_id", "amount"] },
  },
] as const;

function resultText(block: Extract<AnthropicBlock, { type: "tool_result" }>): string {
  if (typeof block.content === "string") return block.content;
  return (block.content ?? []).map((b) => b.text ?? "").join("");
}

/**
 * The refund desk as an Anthropic model: it looks the order up, refunds it if
 * it was delivered, and otherwise explains why not. `tool_use` ids are fresh
 * on every generation, as real models' are.
 */
export function anthropicRefundDesk(body: AnthropicBody): AnthropicReply {
  const last = body.messages[body.messages.length - 1];
  const blocks: AnthropicBlock[] = typeof last.content === "string" ? [{ type: "text", text: last.content }] : last.content;
  const result = blocks.find((b): b is Extract<AnthropicBlock, { type: "tool_result" }> => b.type === "tool_result");
  if (result) {
    const data = JSON.parse(resultText(result)) as { order_id?: string; status?: string; amount?: number; refunded?: boolean };
    if (data.refunded) return { content: [{ type: "text", text: `Done: order ${data.order_id} was refunded.` }] };
    if (data.status === "delivered") {
      return { content: [{ type: "tool_use", id: freshId("toolu"), name: "refund", input: { order_id: data.order_id, amount: data.amount } }] };
    }
    return { content: [{ type: "text", text: `Order ${data.order_id} is ${data.status ?? "missing"}, so it cannot be refunded yet.` }] };
  }
  const text = blocks.map((b) => (b.type === "text" ? b.text : "")).join(" ");
  const orderId = /#?([A-Z]-\d+)/.exec(text)?.[1] ?? "unknown";
  return {
    content: [
      { type: "text", text: "Let me look that order up." },
      { type: "tool_use", id: freshId("toolu"), name: "get_order", input: { order_id: orderId } },
    ],
  };
}

function usageOf(body: AnthropicBody, content: AnthropicBlock[]) {
  return { input_tokens: Math.ceil(JSON.stringify(body.messages).length / 4), output_tokens: Math.ceil(JSON.stringify(content).length / 4) };
}

function stopOf(reply: { content: AnthropicBlock[]; stop_reason?: string }): string {
  return reply.stop_reason ?? (reply.content.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn");
}

function writeJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

function writeEvents(
  res: ServerResponse,
  body: AnthropicBody,
  reply: { content: AnthropicBlock[]; stop_reason?: string },
  chunk: number,
  truncate: boolean,
): void {
  const send = (type: string, data: Record<string, unknown>) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  const usage = usageOf(body, reply.content);
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const message = { id: freshId("msg"), type: "message", role: "assistant", model: body.model, content: [], stop_reason: null, stop_sequence: null };
  send("message_start", { message: { ...message, usage: { input_tokens: usage.input_tokens, output_tokens: 1 } } });
  send("ping", {});
  reply.content.forEach((block, index) => {
    if (block.type === "text") {
      send("content_block_start", { index, content_block: { type: "text", text: "" } });
      for (let i = 0; i < block.text.length; i += chunk)
        send("content_block_delta", { index, delta: { type: "text_delta", text: block.text.slice(i, i + chunk) } });
    } else if (block.type === "tool_use") {
      send("content_block_start", { index, content_block: { type: "tool_use", id: block.id, name: block.name, input: {} } });
      const json = JSON.stringify(block.input);
      for (let i = 0; i < json.length; i += chunk)
        send("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: json.slice(i, i + chunk) } });
    }
    send("content_block_stop", { index });
  });
  if (truncate) {
    setTimeout(() => res.destroy(), 30);
    return;
  }
  send("message_delta", { delta: { stop_reason: stopOf(reply), stop_sequence: null }, usage: { output_tokens: usage.output_tokens } });
  send("message_stop", {});
  res.end();
}

/** Answers one parsed `POST /v1/messages` body, as JSON or as Anthropic's event stream. */
export async function answerMessages(res: ServerResponse, body: AnthropicBody, options: AnthropicHandlerOptions): Promise<void> {
  options.onRequest?.(body);
  const reply = await options.script(body);
  if ("status" in reply) return writeJson(res, reply.status, reply.body);
  const truncate = options.truncate?.(body) ?? false;
  if (body.stream) return writeEvents(res, body, reply, options.chunkChars ?? 7, truncate);
  if (truncate) {
    res.writeHead(200, { "content-type": "application/json" });
    res.end('{"id":"msg_cut","type":"message","content":[{"type":"te');
    return;
  }
  writeJson(res, 200, {
    id: freshId("msg"),
    type: "message",
    role: "assistant",
    model: body.model,
    content: reply.content,
    stop_reason: stopOf(reply),
    stop_sequence: null,
    usage: usageOf(body, reply.content),
  });
}

/** Reads a request body as text. */
export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

export interface ScriptedAnthropic {
  /** The base URL to use as `ANTHROPIC_BASE_URL` (ends in `/v1`). */
  url: string;
  /** Generations answered so far (errors excluded). */
  generations: () => number;
  /** Every request received: its body and headers. */
  requests: Array<{ body: AnthropicBody; headers: IncomingMessage["headers"] }>;
  close: () => Promise<void>;
}

/** Starts a scripted Anthropic Messages server on loopback (`POST /v1/messages`, streamed or not). */
export async function startScriptedAnthropic(options: AnthropicHandlerOptions & { port?: number }): Promise<ScriptedAnthropic> {
  let generations = 0;
  const requests: ScriptedAnthropic["requests"] = [];
  const server: Server = createServer(async (req, res) => {
    try {
      // Claude Code posts to /v1/messages?beta=true: the path decides, not the query.
      if (req.method !== "POST" || !new URL(req.url ?? "/", "http://localhost").pathname.endsWith("/messages")) {
        return writeJson(res, 404, { type: "error", error: { type: "not_found_error", message: `no route ${req.method} ${req.url}` } });
      }
      const body = JSON.parse(await readBody(req)) as AnthropicBody;
      requests.push({ body, headers: req.headers });
      const script = async (b: AnthropicBody) => {
        const reply = await options.script(b);
        if (!("status" in reply)) generations++;
        return reply;
      };
      await answerMessages(res, body, { ...options, script });
    } catch (error) {
      writeJson(res, 500, { type: "error", error: { type: "api_error", message: `scripted anthropic failed: ${String(error)}` } });
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
