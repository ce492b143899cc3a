import { env, exports } from "cloudflare:workers";
import { vi } from "vitest";
import { api, importFor } from "./api-helpers";
import { eventually } from "./helpers";

export interface GeminiInit {
  /** Sent as `x-goog-api-key` (default), as `?key=` (`via: "query"`), or not at all (null). */
  key?: string | null;
  via?: "header" | "query";
  stream?: boolean;
  headers?: Record<string, string>;
}

/** POSTs a generateContent (or streamGenerateContent?alt=sse) body for `model` to the Worker. */
export function gemini(model: string, body: unknown, init: GeminiInit = {}): Promise<Response> {
  const key = init.key === undefined ? "gm-key-default" : init.key;
  const query = new URLSearchParams();
  if (init.stream) query.set("alt", "sse");
  if (key && init.via === "query") query.set("key", key);
  const auth: Record<string, string> = key && init.via !== "query" ? { "x-goog-api-key": key } : {};
  const action = init.stream ? "streamGenerateContent" : "generateContent";
  const search = query.size > 0 ? `?${query}` : "";
  return exports.default.fetch(
    new Request(`http://mm.test/v1beta/models/${model}:${action}${search}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...auth, ...init.headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    }),
  );
}

/** Generations the scripted Gemini model made for `model`. */
export async function geminiGenerations(model: string): Promise<number> {
  const base = (env as unknown as { GEMINI_BASE_URL: string }).GEMINI_BASE_URL;
  const res = await fetch(`${base}/__count?model=${encodeURIComponent(model)}`);
  return ((await res.json()) as { generations: number }).generations;
}

/** Waits until the Worker has recorded an answer (only-if-cached answers 200). */
export async function recordedGemini(model: string, body: unknown, init: GeminiInit = {}): Promise<void> {
  await eventually(async () => {
    const res = await gemini(model, body, { ...init, stream: false, headers: { ...init.headers, "cache-control": "only-if-cached" } });
    await res.arrayBuffer();
    return res.status === 200;
  });
}

/** What the stubbed Gemini upstream answers: a JSON body, SSE chunks (`data:` payloads, each an object or raw text; `cut`: the connection breaks after them), or raw bytes. */
export type GeminiStubReply = ({ json: unknown; status?: number } | { sse: unknown[]; cut?: boolean } | { text: string; contentType?: string }) & {
  delayMs?: number;
  /** The reply waits for this (a test's gate: the request is provably in flight until the test opens it). */
  gate?: Promise<unknown>;
};

/**
 * Runs `fn` while `GEMINI_BASE_URL` answers with `reply` (verbatim: the shapes the scripted model never
 * sends), and `http://mm.test` goes to the Worker (so a client such as `@google/genai` can be pointed at
 * it). `fn` and the result see the bodies the upstream received.
 */
export async function withGeminiUpstream<T>(
  reply: GeminiStubReply | ((body: Record<string, unknown>, url: URL) => GeminiStubReply),
  fn: (calls: Array<Record<string, unknown>>) => Promise<T>,
): Promise<{ result: T; calls: Array<Record<string, unknown>> }> {
  const real = globalThis.fetch;
  const base = new URL((env as unknown as { GEMINI_BASE_URL: string }).GEMINI_BASE_URL).origin;
  const calls: Array<Record<string, unknown>> = [];
  const spy = vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    if (url.origin === "http://mm.test") return exports.default.fetch(request);
    if (url.origin !== base || url.pathname.startsWith("/__")) return real(input, init);
    const body = JSON.parse(await request.text()) as Record<string, unknown>;
    calls.push(body);
    const r = typeof reply === "function" ? reply(body, url) : reply;
    if (r.delayMs) await new Promise((resolve) => setTimeout(resolve, r.delayMs));
    if (r.gate) await r.gate;
    if ("json" in r) return Response.json(r.json, { status: r.status ?? 200 });
    if ("sse" in r) {
      const bytes = new TextEncoder().encode(r.sse.map((d) => `data: ${typeof d === "string" ? d : JSON.stringify(d)}\r\n\r\n`).join(""));
      // cut: the connection breaks after the chunks (no clean end of stream).
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(bytes);
          if (r.cut) controller.error(new Error("connection reset"));
          else controller.close();
        },
      });
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    }
    return new Response(r.text, { headers: { "content-type": r.contentType ?? "application/json" } });
  });
  try {
    return { result: await fn(calls), calls };
  } finally {
    spy.mockRestore();
  }
}

/** One streamed chunk of candidate 0 with `parts` (and candidate fields such as finishReason, safetyRatings). */
export function chunkOf(parts: unknown[] | null, candidate: Record<string, unknown> = {}, response: Record<string, unknown> = {}): Record<string, unknown> {
  const content = parts === null ? {} : { content: { role: "model", parts } };
  return { candidates: [{ ...content, index: 0, ...candidate }], modelVersion: "gemini-stub", responseId: "stub-1", ...response };
}

/**
 * Imports, under `key`, one recorded Gemini answer ("Hello." to "Greet me.") whose candidate metadata carries
 * the chunk layout `layout` (muscle-mem:chunks, src/providers/gemini/layout.ts); returns the import's response and
 * the request that walks to the answer.
 */
export async function importLayout(key: string, model: string, layout: unknown): Promise<{ imported: Response; ask: { contents: unknown[] } }> {
  const contents = [
    { role: "user", parts: [{ text: "Greet me." }] },
    { role: "model", parts: [{ text: "Hello." }], "muscle-mem:candidate": { "muscle-mem:chunks": layout } },
  ];
  const line = { model, params: { "muscle-mem:api": "gemini" }, contents };
  const imported = await importFor(key, { body: JSON.stringify(line), headers: { "content-type": "application/x-ndjson" } });
  return { imported, ask: { contents: contents.slice(0, 1) } };
}

/** The chunks of a Gemini SSE body: every `\r\n\r\n`-separated event, parsed from after its `data: `. */
export function sseChunks<T>(text: string): T[] {
  return text
    .split("\r\n\r\n")
    .filter(Boolean)
    .map((event) => JSON.parse(event.slice(6)) as T);
}
