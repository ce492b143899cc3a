import { canonicalJsonMemo } from "../../core/canonical";
import { reservedFieldOf, upstreamFrameOf } from "../../core/upstream-frame";
import { addPropertyOrders, propertyOrderBypass } from "../../core/schema-order";
import type { GenerateContentRequest } from "./schema";
import { API_FRAME_KEY } from "../../core/protocol";

/** Frame fields whose property order is not keyed (src/core/schema-order.ts): the tool definitions. */
const TOOL_FIELDS: ReadonlySet<string> = new Set(["tools"]);
const UNORDERED: ReadonlySet<string> = new Set(["contents", ...TOOL_FIELDS]);

/**
 * The frame of a Gemini request: the model (from the URL) and every body
 * field but `contents` (the path): `systemInstruction`, `tools`, `toolConfig`,
 * `generationConfig`, `safetySettings` and any field we do not know. Gemini
 * puts no transport field in the body (streaming is the URL's action), so
 * nothing else is ignored. With a live request's `url`, its query string
 * joins it, but for `key` (the credential) and `alt` (`alt=sse`: how a stream
 * is framed). A `/v1/` request's frame also names its API version, and the order
 * of a structured output schema's properties (`responseJsonSchema`) joins it when
 * it is not sorted (src/core/schema-order.ts).
 */
export function geminiFrameOf(body: GenerateContentRequest, model: string, url?: URL, headers?: Headers): Record<string, unknown> {
  const frame: Record<string, unknown> = { ...upstreamFrameOf({ url, headers }, [], TRANSPORT_PARAMS), [API_FRAME_KEY]: "gemini", model };
  // The stable API (`/v1/models/…`) may answer otherwise than v1beta: its own trees (v1beta's frames are unchanged).
  if (url?.pathname.startsWith("/v1/")) frame[VERSION_KEY] = "v1";
  for (const [key, value] of Object.entries(body)) {
    if (key === "contents" || value === null || value === undefined) continue;
    frame[key] = value;
  }
  addPropertyOrders(frame, TOOL_FIELDS);
  return frame;
}

/** The frame key of the Gemini API version, set for `/v1/` only. */
export const VERSION_KEY = "muscle-mem:version";

/** Query parameters that say how the answer is framed, never what it says. */
const TRANSPORT_PARAMS: ReadonlySet<string> = new Set(["alt"]);

export function geminiFrameJsonOf(body: GenerateContentRequest, model: string, url?: URL, headers?: Headers): string {
  return canonicalJsonMemo(geminiFrameOf(body, model, url, headers));
}

/**
 * Why a Gemini request must skip the cache (null when it may use it):
 * `cachedContent` (context stored upstream; as `cached_content` too, the proto name Google also reads), tools the upstream runs
 * (`googleSearch`, `codeExecution`, `urlContext`, `fileSearch`, …: any tool
 * entry other than `functionDeclarations`), several candidates, logprobs, image or audio output,
 * a response format other than the one a hit renders (`?alt=proto`, `?alt=sse` on generateContent),
 * a schema property named like an array index (its order is lost in parsing), and on a live request
 * (`url` given) a body field spelled like a frame entry.
 */
export function geminiBypassReason(body: GenerateContentRequest, url?: URL): string | null {
  // Google reads each field under its proto name too (`cached_content`, `generation_config.candidate_count`).
  const fields = body as Record<string, unknown>;
  if (fields.cachedContent || fields.cached_content) return "cachedContent";
  for (const tool of body.tools ?? []) {
    const server = Object.keys(tool).find((k) => k !== "functionDeclarations");
    if (server) return `server-side tool ${server}`;
  }
  for (const config of [fields.generationConfig, fields.generation_config] as Array<Record<string, unknown> | null | undefined>) {
    const count = config?.candidateCount ?? config?.candidate_count;
    if (typeof count === "number" && count > 1) return "candidateCount > 1";
    if (config?.responseLogprobs === true || config?.response_logprobs === true) return "logprobs";
    if (nonTextOutput(config)) return "non-text output";
  }
  const format = url ? responseFormatBypass(url) : null;
  if (format) return format;
  const unordered = propertyOrderBypass(body, UNORDERED);
  if (unordered) return unordered;
  // `model` is the URL's: a body field of that name would take its place in the frame.
  return reservedFieldOf(body, url ? { url } : undefined, ["model"]);
}

/**
 * Why a request asks for a response format a hit does not render (null when it asks for the one it does):
 * generateContent answers JSON (no `alt`, or `alt=json`), streamGenerateContent SSE (`alt=sse`; without it
 * the adapter bypasses). `alt=proto`, `alt=sse` on generateContent, or `alt` given twice (which value the
 * upstream takes is its own) would otherwise share the tree of the JSON request, as `alt` is not keyed.
 */
function responseFormatBypass(url: URL): string | null {
  const alts = url.searchParams.getAll("alt");
  if (alts.length === 0) return null;
  const stream = url.pathname.endsWith(":streamGenerateContent");
  if (alts.length > 1 || alts[0] !== (stream ? "sse" : "json")) return "response format (alt)";
  return null;
}

/**
 * Whether a generation config asks for output other than text (`responseModalities` with `IMAGE` or `AUDIO`,
 * a `speechConfig`): such answers are never recorded (a replay renders text and calls), so caching the request
 * would keep and serve only its text answers, as chat's `audio output` would.
 */
function nonTextOutput(config: Record<string, unknown> | null | undefined): boolean {
  const modalities = config?.responseModalities ?? config?.response_modalities;
  if (Array.isArray(modalities) && modalities.some((m) => m !== "TEXT")) return true;
  const speech = config?.speechConfig ?? config?.speech_config;
  return speech !== undefined && speech !== null;
}
