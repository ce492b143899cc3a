import type { Context } from "hono";
import { configOf } from "../../config";
import { cachedCompletion } from "../../engine/cached-completion";
import { relayTo } from "../passthrough";
import { geminiAction, geminiAdapter } from "../../providers/gemini/adapter";

type Ctx = Context<{ Bindings: Env }>;

const cached = cachedCompletion(geminiAdapter);

/**
 * Everything under `/v1beta/`: `POST models/{model}:generateContent` and
 * `:streamGenerateContent` through the cached flow; every other call
 * (`countTokens`, `embedContent`, model lists, files) to `GEMINI_BASE_URL`
 * unchanged, marked `bypass`.
 */
export function geminiRoutes(c: Ctx): Promise<Response> {
  if (c.req.method === "POST" && geminiAction(new URL(c.req.url))) return cached(c);
  return relayTo(c, configOf(c.env).geminiBaseUrl);
}
