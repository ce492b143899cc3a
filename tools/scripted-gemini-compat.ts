import { Agent, request, type IncomingMessage, type ServerResponse } from "node:http";
import { refundDeskScript } from "./refund-desk";
import { startScriptedModel, type ChatBody, type ScriptReply } from "./scripted-model";

/** Gemini's OpenAI-compatible chat route, as the `openai` clients call it with `baseURL: …/v1beta/openai`. */
export const COMPAT_CHAT_PATH = "/v1beta/openai/chat/completions";

/**
 * What the scripted compat layer answers: a model named `error-<status>` that status (OpenAI's error shape),
 * `sig…` a tool call with Gemini 3's `extra_content` thought signature (then the refund desk), `echo…` the last user text back, any other the refund desk (tools/refund-desk.ts), as the test upstream's chat model does.
 */
export function compatChat(body: ChatBody): ScriptReply {
  const status = /^error-(\d{3})/.exec(body.model);
  if (status) return { status: Number(status[1]), body: { error: { message: `scripted ${status[1]}`, type: "server_error", code: `upstream_${status[1]}` } } };
  // Gemini 3 on the compat layer: each tool call carries a thought signature the client must send back.
  if (body.model.startsWith("sig") && body.messages[body.messages.length - 1].role === "user") {
    const signed = { extra_content: { google: { thought_signature: "c2lnLTE=" } } };
    const call = { id: "call_sig", type: "function" as const, function: { name: "get_order", arguments: '{"order_id":"S-1"}' }, ...signed };
    return { role: "assistant", content: null, tool_calls: [call] };
  }
  if (body.model.startsWith("echo")) {
    const lastUser = [...body.messages].reverse().find((m) => m.role === "user");
    return { role: "assistant", content: `echo: ${String(lastUser?.content ?? "")}` };
  }
  return refundDeskScript(body);
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
      const inner = request({ host: "127.0.0.1", port, method: "POST", path: "/v1/chat/completions", headers: req.headers, agent }, (reply) => {
        res.writeHead(reply.statusCode ?? 502, reply.headers);
        reply.pipe(res);
      });
      inner.on("error", () => res.destroy());
      req.pipe(inner);
      return true;
    },
    async close() {
      agent.destroy();
      await model.close();
    },
  };
}
