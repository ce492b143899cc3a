import type { StoredAnswer } from "../../cache/answer";
import { renderChunkStream, renderCompletion } from "../../cache/render";

export type CacheOutcome = "hit" | "miss" | "bypass";

export const CACHE_HEADER = "muscle-mem-cache";

/** Serves a recorded answer in the shape the client asked for (JSON or a chunk stream). */
export function serveAnswer(answer: StoredAnswer, opts: { model: string; stream: boolean; includeUsage: boolean; headers?: Record<string, string> }): Response {
  const ctx = { id: `chatcmpl-mm${crypto.randomUUID().replaceAll("-", "")}`, model: opts.model, created: Math.floor(Date.now() / 1000) };
  const headers: Record<string, string> = { [CACHE_HEADER]: "hit", "muscle-mem-node": answer.hash, ...opts.headers };
  if (opts.stream) {
    return new Response(renderChunkStream(answer, ctx, opts.includeUsage), {
      headers: { ...headers, "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" },
    });
  }
  return new Response(JSON.stringify(renderCompletion(answer, ctx)), {
    headers: { ...headers, "content-type": "application/json" },
  });
}
