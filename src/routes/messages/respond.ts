import { renderEventStream, renderMessage, type AnthropicAnswer } from "../../cache/anthropic/render";
import { CACHE_HEADER } from "../chat/respond";

/** Serves a recorded answer as a Messages API `message` or as its event stream. */
export function serveMessage(answer: AnthropicAnswer, opts: { model: string; stream: boolean; headers?: Record<string, string> }): Response {
  const ctx = { id: `msg_mm${crypto.randomUUID().replaceAll("-", "")}`, model: opts.model };
  const headers: Record<string, string> = { [CACHE_HEADER]: "hit", "muscle-mem-node": answer.hash, ...opts.headers };
  if (opts.stream) {
    return new Response(renderEventStream(answer, ctx), {
      headers: { ...headers, "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" },
    });
  }
  return new Response(JSON.stringify(renderMessage(answer, ctx)), { headers: { ...headers, "content-type": "application/json" } });
}
