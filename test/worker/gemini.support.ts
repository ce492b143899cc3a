import { env, exports } from "cloudflare:workers";
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
