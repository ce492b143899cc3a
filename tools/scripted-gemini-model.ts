import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { readBody } from "./scripted-anthropic";
import { answerKeyRoutes } from "./model-list";
import { compatChat, startCompatChat } from "./scripted-gemini-compat";
import type { ChatBody, ScriptReply } from "./scripted-model";

/** A part as the scripted Gemini model reads and writes it. */
export type GeminiPart = {
  text?: string;
  functionCall?: { name: string; args?: Record<string, unknown>; id?: string };
  functionResponse?: { name: string; response?: Record<string, unknown>; id?: string };
};

export interface GeminiModelBody {
  contents: Array<{ role?: string; parts: GeminiPart[] }>;
  systemInstruction?: unknown;
  tools?: unknown[];
  [key: string]: unknown;
}

/** What a script answers: the model's parts, or a raw HTTP error. */
export type GeminiReply = { parts: GeminiPart[] } | { status: number; body: unknown };

/**
 * The refund desk as a Gemini model: it looks the order up, refunds it if it
 * was delivered, and otherwise explains why not. Function calls carry no id,
 * as Gemini's usually do not.
 */
export function geminiRefundDesk(body: GeminiModelBody): GeminiReply {
  const last = body.contents[body.contents.length - 1];
  const result = last.parts.find((p) => p.functionResponse)?.functionResponse;
  if (result) {
    const data = (result.response ?? {}) as { order_id?: string; status?: string; amount?: number; refunded?: boolean };
    if (data.refunded) return { parts: [{ text: `Done: order ${data.order_id} was refunded.` }] };
    if (data.status === "delivered") return { parts: [{ functionCall: { name: "refund", args: { order_id: data.order_id, amount: data.amount } } }] };
    return { parts: [{ text: `Order ${data.order_id} is ${data.status ?? "missing"}, so it cannot be refunded yet.` }] };
  }
  const text = last.parts.map((p) => p.text ?? "").join(" ");
  const orderId = /#?([A-Z]-\d+)/.exec(text)?.[1] ?? "unknown";
  return { parts: [{ text: "Let me look that order up." }, { functionCall: { name: "get_order", args: { order_id: orderId } } }] };
}

/** Answers the last user text back (`echo: …`): for tests that only need some answer. */
export function geminiEcho(body: GeminiModelBody): GeminiReply {
  const last = body.contents[body.contents.length - 1];
  return { parts: [{ text: `echo: ${last.parts.map((p) => p.text ?? "").join("")}` }] };
}

function writeJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json; charset=UTF-8" });
  res.end(JSON.stringify(body));
}

function usageOf(body: GeminiModelBody) {
  const prompt = Math.ceil(JSON.stringify(body.contents).length / 4);
  return { promptTokenCount: prompt, candidatesTokenCount: 7, totalTokenCount: prompt + 7 };
}

/** Streams text in small chunks and each function call in a chunk of its own; the last chunk carries STOP and usage. */
function writeStream(res: ServerResponse, body: GeminiModelBody, model: string, parts: GeminiPart[], chunk: number): void {
  const pieces: GeminiPart[] = [];
  for (const p of parts) {
    if (typeof p.text === "string") for (let i = 0; i < p.text.length; i += chunk) pieces.push({ text: p.text.slice(i, i + chunk) });
    else pieces.push(p);
  }
  res.writeHead(200, { "content-type": "text/event-stream" });
  pieces.forEach((p, i) => {
    const last = i === pieces.length - 1;
    const data = {
      candidates: [{ content: { role: "model", parts: [p] }, index: 0, ...(last ? { finishReason: "STOP" } : {}) }],
      ...(last ? { usageMetadata: usageOf(body) } : {}),
      modelVersion: model,
    };
    res.write(`data: ${JSON.stringify(data)}\r\n\r\n`);
  });
  res.end();
}

export interface ScriptedGeminiModel {
  /** The base URL to use as `GEMINI_BASE_URL` (no path). */
  url: string;
  /** Generations answered so far (errors excluded), and per model. */
  generations: (model?: string) => number;
  /** Every request received: its path and query, body and headers. */
  requests: Array<{ url: string; body: GeminiModelBody; headers: IncomingMessage["headers"] }>;
  close: () => Promise<void>;
}

/**
 * Starts a scripted Gemini server on loopback: `POST /v1beta/models/{model}:generateContent`
 * and `:streamGenerateContent?alt=sse`. A model named `error-<status>` answers that status in
 * Gemini's error shape; a model named `slow-<ms>…` answers after that delay. `GET /__count?model=M` answers `{generations}` for that model.
 * Gemini's OpenAI-compatible `POST /v1beta/openai/chat/completions` is the scripted chat model's (`chat`, default
 * tools/scripted-gemini-compat.ts's `compatChat`: chat completion JSON and SSE), counted by model with the rest.
 */
export async function startScriptedGeminiModel(options: {
  script: (body: GeminiModelBody, model: string) => GeminiReply;
  chat?: (body: ChatBody) => ScriptReply;
  chunkChars?: number;
  port?: number;
}): Promise<ScriptedGeminiModel> {
  const counts = new Map<string, number>();
  const requests: ScriptedGeminiModel["requests"] = [];
  const keyChecks = { count: 0, revoked: new Set<string>() };
  const count = (model: string) => {
    counts.set(model, (counts.get(model) ?? 0) + 1);
    counts.set("", (counts.get("") ?? 0) + 1);
  };
  const compat = await startCompatChat(options.chat ?? compatChat, count);
  const server: Server = createServer(async (req, res) => {
    try {
      const url = new URL(req.url ?? "/", "http://localhost");
      if (answerKeyRoutes(req, res, keyChecks)) return;
      if (compat.handle(req, res)) return;
      if (req.method === "GET" && url.pathname === "/__count")
        return writeJson(res, 200, { generations: counts.get(url.searchParams.get("model") ?? "") ?? 0 });
      // Both API versions: v1beta, and the stable v1 (google-genai's `apiVersion: "v1"`).
      const action = /^\/v1(?:beta|alpha)?\/models\/([^/:]+):(generateContent|streamGenerateContent)$/.exec(url.pathname);
      if (req.method !== "POST" || !action)
        return writeJson(res, 404, { error: { code: 404, message: `no route ${req.method} ${url.pathname}`, status: "NOT_FOUND" } });
      const body = JSON.parse(await readBody(req)) as GeminiModelBody;
      requests.push({ url: `${url.pathname}${url.search}`, body, headers: req.headers });
      const model = action[1];
      const slow = /^slow-(\d+)/.exec(model);
      if (slow) await new Promise((r) => setTimeout(r, Number(slow[1])));
      const status = /^error-(\d{3})/.exec(model);
      const reply = status
        ? { status: Number(status[1]), body: { error: { code: Number(status[1]), message: `scripted ${status[1]}`, status: "UNAVAILABLE" } } }
        : options.script(body, model);
      if ("status" in reply) return writeJson(res, reply.status, reply.body);
      count(model);
      if (action[2] === "streamGenerateContent") return writeStream(res, body, model, reply.parts, options.chunkChars ?? 7);
      writeJson(res, 200, {
        candidates: [{ content: { role: "model", parts: reply.parts }, finishReason: "STOP", index: 0 }],
        usageMetadata: usageOf(body),
        modelVersion: model,
        responseId: `scripted${Date.now()}`,
      });
    } catch (error) {
      writeJson(res, 500, { error: { code: 500, message: `scripted gemini failed: ${String(error)}`, status: "INTERNAL" } });
    }
  });
  server.keepAliveTimeout = 60_000;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
    });
  } catch (error) {
    // The port is taken (the other Worker project's model): leave nothing running behind.
    await compat.close();
    throw error;
  }
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    generations: (model = "") => counts.get(model) ?? 0,
    requests,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
      await compat.close();
    },
  };
}
