import { canonicalJsonMemo } from "../canonical";
import type { GenerateContentRequest } from "./schema";

/** The frame key that keeps Gemini trees apart from other APIs' trees. */
export const API_KEY = "muscle-mem:api";

/**
 * The frame of a Gemini request: the model (from the URL) and every body
 * field but `contents` (the path): `systemInstruction`, `tools`, `toolConfig`,
 * `generationConfig`, `safetySettings` and any field we do not know. Gemini
 * puts no transport field in the body (streaming is the URL's action), so
 * nothing else is ignored.
 */
export function geminiFrameOf(body: GenerateContentRequest, model: string): Record<string, unknown> {
  const frame: Record<string, unknown> = { [API_KEY]: "gemini", model };
  for (const [key, value] of Object.entries(body)) {
    if (key === "contents" || value === null || value === undefined) continue;
    frame[key] = value;
  }
  return frame;
}

export function geminiFrameJsonOf(body: GenerateContentRequest, model: string): string {
  return canonicalJsonMemo(geminiFrameOf(body, model));
}

/**
 * Why a Gemini request must skip the cache (null when it may use it):
 * `cachedContent` (context stored upstream), tools the upstream runs
 * (`googleSearch`, `codeExecution`, `urlContext`, `fileSearch`, …: any tool
 * entry other than `functionDeclarations`), several candidates, and logprobs.
 */
export function geminiBypassReason(body: GenerateContentRequest): string | null {
  if (body.cachedContent) return "cachedContent";
  for (const tool of body.tools ?? []) {
    const server = Object.keys(tool).find((k) => k !== "functionDeclarations");
    if (server) return `server-side tool ${server}`;
  }
  const config = body.generationConfig as Record<string, unknown> | null | undefined;
  if (typeof config?.candidateCount === "number" && config.candidateCount > 1) return "candidateCount > 1";
  if (config?.responseLogprobs === true) return "logprobs";
  return null;
}
