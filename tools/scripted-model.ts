import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { answerKeyRoutes } from "./model-list";

/** An assistant message as a scripted model answers it. */
export interface ScriptedMessage {
  role: "assistant";
  content: string | null;
  tool_calls?: Array<{ id: string; type: "function"; function: { name: string; arguments: string } }>;
  /** A reasoning model's thoughts beside the answer (DeepSeek's, OpenRouter's field); JSON answers only. */
  reasoning_content?: string;
}

/** What a script returns: a message, or a raw HTTP error to answer with. */
export type ScriptReply = ScriptedMessage | { status: number; body: unknown; headers?: Record<string, string> };

export interface ChatBody {
  model: string;
  messages: Array<{ role: string; content?: unknown; tool_calls?: unknown; tool_call_id?: string }>;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  [key: string]: unknown;
}

export interface ScriptedModelOptions {
  /** Decides the answer to a request. */
  script: (body: ChatBody) => ScriptReply | Promise<ScriptReply>;
  /** Delay before answering, to look like a model (ms). */
  delayMs?: number;
  /** Characters per streamed content chunk. */
  chunkChars?: number;
  host?: string;
  port?: number;
  /** Cut the answer short: a stream without `[DONE]`, or half a JSON body. */
  truncate?: (body: ChatBody) => boolean;
}

export interface ScriptedModel {
  url: string;
  /** Chat generations answered so far (errors excluded). */
  generations: () => number;
  /** The bodies of every chat request received. */
  requests: ChatBody[];
  reset: () => void;
  close: () => Promise<void>;
  /** Answers GET requests with JSON when it returns a value (a test hook). */
  onGet?: (url: URL) => unknown;
}

let nextId = 0;

function usageOf(body: ChatBody, message: ScriptedMessage) {
  const prompt = Math.ceil(JSON.stringify(body.messages).length / 4);
  const completion = Math.ceil(JSON.stringify(message).length / 4);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

function finishOf(message: ScriptedMessage): string {
  return message.tool_calls && message.tool_calls.length > 0 ? "tool_calls" : "stop";
}

function writeJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

function writeStream(res: ServerResponse, body: ChatBody, message: ScriptedMessage, chunkChars: number, truncate: boolean): void {
  const id = `chatcmpl-scripted-${nextId++}`;
  const created = Math.floor(Date.now() / 1000);
  const send = (choices: unknown[], usage: unknown = undefined) =>
    res.write(
      `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model: body.model, choices, ...(usage === undefined ? {} : { usage }) })}\n\n`,
    );
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  send([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }]);
  if (truncate) {
    send([{ index: 0, delta: { content: "partial ans" }, finish_reason: null }]);
    setTimeout(() => res.destroy(), 30);
    return;
  }
  const text = message.content ?? "";
  for (let i = 0; i < text.length; i += chunkChars) send([{ index: 0, delta: { content: text.slice(i, i + chunkChars) }, finish_reason: null }]);
  message.tool_calls?.forEach((call, index) => {
    send([
      {
        index: 0,
        delta: { tool_calls: [{ index, id: call.id, type: "function", function: { name: call.function.name, arguments: "" } }] },
        finish_reason: null,
      },
    ]);
    const args = call.function.arguments;
    for (let i = 0; i < args.length; i += chunkChars)
      send([{ index: 0, delta: { tool_calls: [{ index, function: { arguments: args.slice(i, i + chunkChars) } }] }, finish_reason: null }]);
  });
  send([{ index: 0, delta: {}, finish_reason: finishOf(message) }]);
  if (body.stream_options?.include_usage) send([], usageOf(body, message));
  res.end("data: [DONE]\n\n");
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * Starts a local OpenAI-compatible model server on loopback whose answers come
 * from a script. It is the upstream in tests, the demo and the benchmarks.
 */
export async function startScriptedModel(options: ScriptedModelOptions): Promise<ScriptedModel> {
  let generations = 0;
  const requests: ChatBody[] = [];
  let scripted: ScriptedModel | undefined;
  const keyChecks = { count: 0, revoked: new Set<string>() };
  const server: Server = createServer(async (req, res) => {
    try {
      if (answerKeyRoutes(req, res, keyChecks)) return;
      if (req.method === "GET" && scripted?.onGet) {
        const answer = scripted.onGet(new URL(req.url ?? "/", "http://localhost"));
        if (answer !== undefined) return writeJson(res, 200, answer);
      }
      if (req.method !== "POST" || !new URL(req.url ?? "/", "http://localhost").pathname.endsWith("/chat/completions")) {
        writeJson(res, 404, { error: { message: `scripted model: no route ${req.method} ${req.url}`, type: "invalid_request_error", code: "not_found" } });
        return;
      }
      const body = JSON.parse(await readBody(req)) as ChatBody;
      requests.push(body);
      if (options.delayMs) await new Promise((r) => setTimeout(r, options.delayMs));
      const reply = await options.script(body);
      if ("status" in reply) {
        writeJson(res, reply.status, reply.body, reply.headers);
        return;
      }
      generations++;
      const truncate = options.truncate?.(body) ?? false;
      if (body.stream) {
        writeStream(res, body, reply, options.chunkChars ?? 7, truncate);
        return;
      }
      if (truncate) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end('{"id":"chatcmpl-cut","choices":[{"index":0,"message":{"role":"assis');
        return;
      }
      writeJson(res, 200, {
        id: `chatcmpl-scripted-${nextId++}`,
        object: "chat.completion",
        created: Math.floor(Date.now() / 1000),
        model: body.model,
        choices: [{ index: 0, message: { ...reply, refusal: null, annotations: [] }, logprobs: null, finish_reason: finishOf(reply) }],
        usage: usageOf(body, reply),
      });
    } catch (error) {
      writeJson(res, 500, { error: { message: `scripted model failed: ${String(error)}`, type: "server_error", code: "scripted_failure" } });
    }
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  scripted = {
    url: `http://127.0.0.1:${port}/v1`,
    generations: () => generations,
    requests,
    reset: () => {
      generations = 0;
      requests.length = 0;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return scripted;
}
