import { env } from "cloudflare:workers";
import { vi } from "vitest";

/** A JSON body or an SSE text the stubbed upstream answers with. */
export type StubReply = { json: unknown } | { sse: string[] } | { text: string; contentType?: string };

/**
 * Runs `fn` while requests to the chat or Anthropic upstream are answered
 * with `reply` (verbatim bytes: the shapes the scripted model never sends);
 * every other fetch goes through. Returns the bodies the upstream received.
 */
export async function withUpstream<T>(reply: StubReply | ((body: Record<string, unknown>) => StubReply), fn: () => Promise<T>): Promise<T> {
  const real = globalThis.fetch;
  const bases = [env.UPSTREAM_BASE_URL, env.ANTHROPIC_BASE_URL].map((b) => new URL(String(b)).origin);
  const spy = vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const method = (input instanceof Request ? input.method : init?.method) ?? "GET";
    // A key's check (GET …/models, src/engine/key-freshness.ts) goes to the real scripted upstream.
    if (!bases.includes(url.origin) || url.pathname.startsWith("/__") || method === "GET") return real(input, init);
    const text = input instanceof Request ? await input.text() : String(init?.body ?? "");
    const r = typeof reply === "function" ? reply(JSON.parse(text) as Record<string, unknown>) : reply;
    if ("json" in r) return Response.json(r.json);
    if ("sse" in r) return new Response(r.sse.map((d) => `data: ${d}\n\n`).join(""), { headers: { "content-type": "text/event-stream" } });
    return new Response(r.text, { headers: { "content-type": r.contentType ?? "application/json" } });
  });
  try {
    return await fn();
  } finally {
    spy.mockRestore();
  }
}

/** A chat.completion body around `message`. */
export function completion(message: Record<string, unknown>, finish = "stop"): unknown {
  return {
    id: "chatcmpl-stub",
    object: "chat.completion",
    created: 1,
    model: "stub",
    choices: [{ index: 0, message, logprobs: null, finish_reason: finish }],
    usage: { prompt_tokens: 5, completion_tokens: 5, total_tokens: 10 },
  };
}

/** The `data:` payloads of a chat chunk stream made of `deltas`, ending with `finish` and [DONE]. */
export function chunks(deltas: Array<Record<string, unknown>>, finish = "stop"): string[] {
  const chunk = (delta: Record<string, unknown>, finishReason: string | null) =>
    JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "stub", choices: [{ index: 0, delta, finish_reason: finishReason }] });
  return [...deltas.map((d) => chunk(d, null)), chunk({}, finish), "[DONE]"];
}

/** A chat request as a scripted upstream reads it. */
export type ChatScriptBody = { model: string; messages: Array<{ role: string; content: string }> };

/**
 * From now until the test's mocks are restored, every chat completion sent to UPSTREAM_BASE_URL is answered
 * with `script(body)` as the assistant's text (id `chatcmpl-<n>`, the request's model, usage 10 / 5); the
 * returned counter's `asked` counts them. Every other fetch goes through.
 */
export function scriptChatUpstream(script: (body: ChatScriptBody) => string): { asked: number } {
  const counter = { asked: 0 };
  const origin = new URL(String(env.UPSTREAM_BASE_URL)).origin;
  const real = globalThis.fetch;
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    if (new URL(request.url).origin !== origin || !request.url.endsWith("/chat/completions")) return real(input, init);
    const body = (await request.json()) as ChatScriptBody;
    counter.asked++;
    return Response.json({
      id: `chatcmpl-${counter.asked}`,
      object: "chat.completion",
      created: 1,
      model: body.model,
      choices: [{ index: 0, message: { role: "assistant", content: script(body) }, finish_reason: "stop" }],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    });
  });
  return counter;
}
