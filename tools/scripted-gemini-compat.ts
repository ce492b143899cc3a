import { Agent, request, type IncomingMessage, type ServerResponse } from "node:http";
import { refundDeskScript } from "./refund-desk";
import { startScriptedModel, type ChatBody, type ScriptReply } from "./scripted-model";

/** Gemini's OpenAI-compatible chat route, as the `openai` clients call it with `baseURL: …/v1beta/openai`. */
export const COMPAT_CHAT_PATH = "/v1beta/openai/chat/completions";

/** The thought signature the scripted Gemini 3 puts on each tool call it makes (`sig…` models). */
export const SCRIPTED_SIGNATURE = { google: { thought_signature: "c2lnLTE=" } };

/** Whether a `sig…` model answers this request with its signed tool call: the first turn, a user message last. */
const signsCall = (body: ChatBody): boolean => body.model.startsWith("sig") && body.messages[body.messages.length - 1]?.role === "user";

/**
 * What the scripted compat layer answers: a model named `error-<status>` that status (OpenAI's error shape),
 * `sig…` a tool call with Gemini 3's `extra_content` thought signature (then the refund desk), `echo…` the last user text back, any other the refund desk (tools/refund-desk.ts), as the test upstream's chat model does.
 */
export function compatChat(body: ChatBody): ScriptReply {
  const status = /^error-(\d{3})/.exec(body.model);
  if (status) return { status: Number(status[1]), body: { error: { message: `scripted ${status[1]}`, type: "server_error", code: `upstream_${status[1]}` } } };
  // Gemini 3 on the compat layer: each tool call carries a thought signature the client must send back.
  if (signsCall(body)) {
    const call = {
      id: "call_sig",
      type: "function" as const,
      function: { name: "get_order", arguments: '{"order_id":"S-1"}' },
      extra_content: SCRIPTED_SIGNATURE,
    };
    return { role: "assistant", content: null, tool_calls: [call] };
  }
  if (body.model.startsWith("echo")) {
    const lastUser = [...body.messages].reverse().find((m) => m.role === "user");
    return { role: "assistant", content: `echo: ${String(lastUser?.content ?? "")}` };
  }
  return refundDeskScript(body);
}

/**
 * The signed tool call streamed as Gemini's compat layer streams it (captured from Gemini 3): the call whole on one
 * delta, its keys sorted, no `index`, the signature in `extra_content`; then the finish chunk and `[DONE]`. The
 * scripted chat model streams only the fields of its own calls, so this route writes these itself.
 */
function writeSignedStream(res: ServerResponse, body: ChatBody): void {
  const chunk = (delta: unknown, finish: string | null) =>
    `data: ${JSON.stringify({ choices: [{ delta, finish_reason: finish, index: 0 }], created: 1, id: "gemini-compat-sig", model: body.model, object: "chat.completion.chunk" })}\n\n`;
  const call = {
    extra_content: SCRIPTED_SIGNATURE,
    function: { arguments: '{"order_id":"S-1"}', name: "get_order" },
    id: "function-call-sig",
    type: "function",
  };
  res.writeHead(200, { "content-type": "text/event-stream" });
  res.end(`${chunk({ role: "assistant", tool_calls: [call] }, null)}${chunk({}, "tool_calls")}data: [DONE]\n\n`);
}

/** The request's JSON body, or null (relayed as sent: the scripted model answers what is not JSON). */
function parsed(raw: Buffer): ChatBody | null {
  try {
    return JSON.parse(raw.toString("utf8")) as ChatBody;
  } catch {
    return null;
  }
}

export interface CompatChat {
  /** Answers `POST /v1beta/openai/chat/completions` (chat completion JSON or SSE): true when it did. */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
  close(): Promise<void>;
}

/**
 * The scripted chat model (tools/scripted-model.ts) behind the scripted Gemini server's compat route: each
 * request on COMPAT_CHAT_PATH is relayed to it, and `onGeneration` counts each answer by its model.
 */
export async function startCompatChat(script: (body: ChatBody) => ScriptReply, onGeneration: (model: string) => void): Promise<CompatChat> {
  const model = await startScriptedModel({
    port: 0,
    script: (body) => {
      const reply = script(body);
      if (!("status" in reply)) onGeneration(body.model);
      return reply;
    },
  });
  const port = new URL(model.url).port;
  const agent = new Agent({ keepAlive: true });
  return {
    handle(req, res) {
      if (req.method !== "POST" || new URL(req.url ?? "/", "http://localhost").pathname !== COMPAT_CHAT_PATH) return false;
      void (async () => {
        const chunks: Buffer[] = [];
        for await (const chunk of req) chunks.push(chunk as Buffer);
        const raw = Buffer.concat(chunks);
        const body = parsed(raw);
        if (body && body.stream === true && typeof body.model === "string" && Array.isArray(body.messages) && signsCall(body) && script === compatChat) {
          onGeneration(body.model);
          return writeSignedStream(res, body);
        }
        const { "transfer-encoding": _chunked, ...sent } = req.headers;
        const headers = { ...sent, "content-length": String(raw.length) };
        const inner = request({ host: "127.0.0.1", port, method: "POST", path: "/v1/chat/completions", headers, agent }, (reply) => {
          res.writeHead(reply.statusCode ?? 502, reply.headers);
          reply.pipe(res);
        });
        inner.on("error", () => res.destroy());
        inner.end(raw);
      })().catch(() => res.destroy());
      return true;
    },
    async close() {
      agent.destroy();
      await model.close();
    },
  };
}
