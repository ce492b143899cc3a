import { env } from "cloudflare:workers";
import { vi } from "vitest";

/** A chat request as the scripted upstream reads it. */
export interface ChatUpstreamBody {
  model: string;
  messages: Array<{ role: string; content: string; [field: string]: unknown }>;
}

/**
 * Answers every `POST …/chat/completions` to UPSTREAM_BASE_URL's origin with the assistant message fields
 * `answer` gives for the request (its body, and its text as sent), until the test's mocks are restored
 * (`vi.restoreAllMocks()`); every other request goes through. `asked()` counts the answers.
 */
export function scriptChatUpstream(answer: (body: ChatUpstreamBody, text: string) => Record<string, unknown>): { asked: () => number } {
  let asked = 0;
  const origin = new URL(String(env.UPSTREAM_BASE_URL)).origin;
  const real = globalThis.fetch;
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    if (new URL(request.url).origin !== origin || !request.url.endsWith("/chat/completions")) return real(input, init);
    const text = await request.text();
    const body = JSON.parse(text) as ChatUpstreamBody;
    asked++;
    return Response.json({
      id: `chatcmpl-${asked}`,
      object: "chat.completion",
      created: 1,
      model: body.model,
      choices: [{ index: 0, message: { role: "assistant", ...answer(body, text) }, finish_reason: "stop" }],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    });
  });
  return { asked: () => asked };
}
