import { env, exports } from "cloudflare:workers";
import { vi } from "vitest";
import { settled } from "./settled";

/** What the scripted upstream answers: the exact bytes of a JSON body, or the `data:` payloads of a stream (written as given). */
export type Scripted = { json: string } | { sse: string[] };

/**
 * Runs `fn` while every model request to the chat, Anthropic, Responses or Gemini upstream is answered by
 * `reply(body, stream)` with exactly the bytes given (field order and number text as the vendor wrote them);
 * every other fetch (key checks, test hooks) goes through. Returns what `fn` returned and how many model calls
 * the upstream answered.
 */
export async function scripted<T>(
  reply: (body: Record<string, unknown>, stream: boolean) => Scripted,
  fn: () => Promise<T>,
): Promise<{ value: T; asked: number }> {
  const real = globalThis.fetch;
  const e = env as unknown as Record<string, string>;
  const bases = [e.UPSTREAM_BASE_URL, e.ANTHROPIC_BASE_URL, e.GEMINI_BASE_URL].map((b) => new URL(b).origin);
  let asked = 0;
  const spy = vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const method = (input instanceof Request ? input.method : init?.method) ?? "GET";
    if (!bases.includes(url.origin) || url.pathname.startsWith("/__") || method === "GET") return real(input, init);
    const text = input instanceof Request ? await input.text() : String(init?.body ?? "");
    const body = JSON.parse(text) as Record<string, unknown>;
    const stream = body.stream === true || url.pathname.includes(":streamGenerateContent");
    asked++;
    const r = reply(body, stream);
    if ("json" in r) return new Response(r.json, { headers: { "content-type": "application/json" } });
    return new Response(r.sse.map((d) => `data: ${d}\n\n`).join(""), { headers: { "content-type": "text/event-stream" } });
  });
  try {
    return { value: await fn(), asked };
  } finally {
    spy.mockRestore();
  }
}

/** POSTs `body` to the Worker at `path` with `headers`, settled (what it records has landed when this returns); the body read as text. */
export async function send(path: string, body: unknown, headers: Record<string, string>): Promise<{ status: number; cache: string | null; text: string }> {
  return settled(async () => {
    const res = await exports.default.fetch(
      new Request(`http://mm.test${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) }),
    );
    return { status: res.status, cache: res.headers.get("muscle-mem-cache"), text: await res.text() };
  });
}

/** The JSON payloads of an SSE text (not `[DONE]`). */
export function events(text: string): Array<Record<string, unknown>> {
  return text
    .split("\n")
    .filter((line) => line.startsWith("data: {"))
    .map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>);
}
