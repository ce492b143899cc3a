import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { responsesRefundDesk, startScriptedResponsesModel, type ScriptedResponsesModel } from "../../tools/scripted-responses-model";

/**
 * The upstream of the client-behaviour checks (test/e2e/clients-*.test.ts): a Chat Completions model on
 * loopback whose answers and failures the test steers, and the scripted Responses refund desk behind
 * `/v1/responses`. Every request is logged with its query, headers and how it ended, so that a test can
 * tell what reached the model, what failed there and what the Worker cancelled.
 *
 * Chat models by name: `zod-…` answers a JSON object for a structured-output schema; `slow-…` streams its
 * first content chunk, then waits until the test calls `release(model)` and sends the rest one chunk every
 * `paceMs` (an abort mid-stream); `late-…` answers once released (a client timeout); any other answers
 * `Echo: <the last user message>` at once. An Anthropic `/messages` stream and a Gemini `:streamGenerateContent`
 * of a `slow-…` model are held and released the same way.
 */
export interface UpstreamCall {
  path: string;
  search: string;
  headers: IncomingMessage["headers"];
  model: string;
  stream: boolean;
  /** answered: a whole answer sent; failed: an error status sent; cancelled: the connection closed first. */
  end: "pending" | "answered" | "failed" | "cancelled";
}

export interface ClientsUpstream {
  /** The base URL for `UPSTREAM_BASE_URL` (ends in `/v1`). */
  url: string;
  calls: UpstreamCall[];
  /** The next `count` chat requests answer `status` with OpenAI's error envelope. */
  failNext: (count: number, status?: number) => void;
  /** Lets every held `slow-…` or `late-…` answer of `model` go on, now and later. */
  release: (model: string) => void;
  close: () => Promise<void>;
}

/** The JSON object a `zod-…` model answers (the schema the test parses it with). */
export const REFUND_DECISION = { order_id: "A-1", amount: 42.5, approve: true };

interface ChatRequest {
  model: string;
  messages: Array<{ role: string; content?: unknown }>;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
}

function answerOf(body: ChatRequest): string {
  if (body.model.startsWith("zod-")) return JSON.stringify(REFUND_DECISION);
  const user = [...body.messages].reverse().find((m) => m.role === "user");
  return `Echo: ${typeof user?.content === "string" ? user.content : JSON.stringify(user?.content ?? "")} (a model's answer, with "quotes", \\ and ünïcödé)`;
}

let nextId = 0;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function usageOf(body: ChatRequest, text: string) {
  const prompt = Math.ceil(JSON.stringify(body.messages).length / 4);
  const completion = Math.ceil(text.length / 4);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/** One gate per model: held answers wait for it; `release` opens it for good. */
class Gates {
  private readonly gates = new Map<string, { opened: Promise<void>; open: () => void }>();

  private gate(model: string) {
    let gate = this.gates.get(model);
    if (!gate) {
      let open = () => {};
      const opened = new Promise<void>((resolve) => {
        open = resolve;
      });
      gate = { opened, open };
      this.gates.set(model, gate);
    }
    return gate;
  }

  wait(model: string): Promise<void> {
    return this.gate(model).opened;
  }

  release(model: string): void {
    this.gate(model).open();
  }
}

async function writeChat(res: ServerResponse, body: ChatRequest, call: UpstreamCall, gates: Gates, paceMs: number): Promise<void> {
  const text = answerOf(body);
  const id = `chatcmpl-clients-${nextId++}`;
  const created = Math.floor(Date.now() / 1000);
  if (!body.stream) {
    if (body.model.startsWith("late-")) await gates.wait(body.model);
    if (res.destroyed) return;
    const message = { role: "assistant", content: text, refusal: null, annotations: [] };
    res.writeHead(200, { "content-type": "application/json", "x-request-id": `req-${id}` });
    res.end(
      JSON.stringify({
        id,
        object: "chat.completion",
        created,
        model: body.model,
        choices: [{ index: 0, message, logprobs: null, finish_reason: "stop" }],
        usage: usageOf(body, text),
      }),
    );
    call.end = "answered";
    return;
  }
  const send = (choices: unknown[], usage?: unknown) =>
    res.write(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model: body.model, choices, ...(usage ? { usage } : {}) })}\n\n`);
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", "x-request-id": `req-${id}` });
  send([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }]);
  const slow = body.model.startsWith("slow-");
  for (let i = 0; i < text.length; i += 6) {
    send([{ index: 0, delta: { content: text.slice(i, i + 6) }, finish_reason: null }]);
    if (slow) await (i === 0 ? gates.wait(body.model) : sleep(paceMs));
    if (res.destroyed) return;
  }
  send([{ index: 0, delta: {}, finish_reason: "stop" }]);
  if (body.stream_options?.include_usage) send([], usageOf(body, text));
  res.end("data: [DONE]\n\n");
  call.end = "answered";
}

/** An Anthropic Messages event stream of the echo answer, held after its first text delta like a `slow-…` chat stream. */
async function writeMessagesStream(res: ServerResponse, body: ChatRequest, call: UpstreamCall, gates: Gates, paceMs: number): Promise<void> {
  const text = answerOf(body);
  const send = (type: string, data: Record<string, unknown>) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const usage = { input_tokens: Math.ceil(JSON.stringify(body.messages).length / 4), output_tokens: 1 };
  const message = {
    id: `msg_clients_${nextId++}`,
    type: "message",
    role: "assistant",
    model: body.model,
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage,
  };
  send("message_start", { message });
  send("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
  for (let i = 0; i < text.length; i += 6) {
    send("content_block_delta", { index: 0, delta: { type: "text_delta", text: text.slice(i, i + 6) } });
    await (i === 0 ? gates.wait(body.model) : sleep(paceMs));
    if (res.destroyed) return;
  }
  send("content_block_stop", { index: 0 });
  send("message_delta", { delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: Math.ceil(text.length / 4) } });
  send("message_stop", {});
  res.end();
  call.end = "answered";
}

/** A Gemini `streamGenerateContent?alt=sse` stream of the echo answer, held after its first chunk like a `slow-…` chat stream. */
async function writeGeminiStream(res: ServerResponse, model: string, call: UpstreamCall, gates: Gates, paceMs: number): Promise<void> {
  const text = `Echo from ${model} (a model's answer, with "quotes", \\ and ünïcödé)`;
  res.writeHead(200, { "content-type": "text/event-stream" });
  for (let i = 0; i < text.length; i += 6) {
    const last = i + 6 >= text.length;
    const candidate = { content: { role: "model", parts: [{ text: text.slice(i, i + 6) }] }, index: 0, ...(last ? { finishReason: "STOP" } : {}) };
    const usage = last ? { usageMetadata: { promptTokenCount: 4, candidatesTokenCount: 12, totalTokenCount: 16 } } : {};
    res.write(`data: ${JSON.stringify({ candidates: [candidate], ...usage, modelVersion: model })}\r\n\r\n`);
    if (last) break;
    await (i === 0 ? gates.wait(model) : sleep(paceMs));
    if (res.destroyed) return;
  }
  res.end();
  call.end = "answered";
}

/** Copies the scripted Responses model's answer (JSON or its event stream) to `res`. */
async function relayResponses(res: ServerResponse, responses: ScriptedResponsesModel, raw: string, call: UpstreamCall): Promise<void> {
  const upstream = await fetch(`${responses.url}/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: raw });
  res.writeHead(upstream.status, { "content-type": upstream.headers.get("content-type") ?? "application/json" });
  res.end(Buffer.from(await upstream.arrayBuffer()));
  call.end = upstream.ok ? "answered" : "failed";
}

/**
 * Starts the steerable upstream on loopback; `paceMs` spaces a released `slow-…` stream's chunks (default 200:
 * the Worker has that long per remaining chunk to notice a client gone, about 2 s in all, on a loaded machine).
 */
export async function startClientsUpstream(options: { paceMs?: number } = {}): Promise<ClientsUpstream> {
  const paceMs = options.paceMs ?? 200;
  const gates = new Gates();
  const responses = await startScriptedResponsesModel({ script: responsesRefundDesk });
  const calls: UpstreamCall[] = [];
  let failures: { count: number; status: number } = { count: 0, status: 500 };
  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    const raw = await readBody(req);
    const body = (raw ? JSON.parse(raw) : {}) as ChatRequest;
    const call: UpstreamCall = {
      path: url.pathname,
      search: url.search,
      headers: req.headers,
      // Gemini names the model in the path (`/v1beta/models/{model}:streamGenerateContent`).
      model: body.model ?? /\/models\/([^/:]+):/.exec(url.pathname)?.[1] ?? "",
      stream: body.stream === true,
      end: "pending",
    };
    calls.push(call);
    res.on("close", () => {
      if (call.end === "pending") call.end = "cancelled";
    });
    if (url.pathname.endsWith("/responses")) return relayResponses(res, responses, raw, call);
    if (url.pathname.endsWith(":streamGenerateContent") && call.model.startsWith("slow-")) return writeGeminiStream(res, call.model, call, gates, paceMs);
    if (url.pathname.endsWith("/messages") && body.stream && body.model.startsWith("slow-")) return writeMessagesStream(res, body, call, gates, paceMs);
    if (req.method !== "POST" || !url.pathname.endsWith("/chat/completions")) {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `no route ${req.method} ${url.pathname}`, type: "invalid_request_error" } }));
      call.end = "failed";
      return;
    }
    if (failures.count > 0) {
      failures = { ...failures, count: failures.count - 1 };
      // retry-after-ms keeps the client's backoff short (the openai client honours it).
      res.writeHead(failures.status, { "content-type": "application/json", "retry-after-ms": "10" });
      res.end(JSON.stringify({ error: { message: "the scripted upstream is overloaded", type: "server_error", code: null, param: null } }));
      call.end = "failed";
      return;
    }
    await writeChat(res, body, call, gates, paceMs);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    calls,
    failNext: (count, status = 500) => {
      failures = { count, status };
    },
    release: (model) => gates.release(model),
    close: async () => {
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
      await responses.close();
    },
  };
}
