import { ApiError } from "../core/errors";
import { logEvent } from "../observability/log-event";
import { HEADER_PREFIX } from "../core/protocol";

/** Request headers that belong to this hop or to muscle-mem, never to the upstream. */
const DROP_REQUEST = new Set([
  "host",
  "content-length",
  "connection",
  "keep-alive",
  "transfer-encoding",
  "upgrade",
  "cf-connecting-ip",
  "cf-ray",
  "cf-visitor",
  "cf-ipcountry",
  "x-forwarded-for",
  "x-forwarded-proto",
  "x-real-ip",
]);

/**
 * Response headers never relayed: those that describe the upstream's transfer encoding, not the body we pass
 * on; `set-cookie` (the Worker's origin is shared by every tenant: one tenant's upstream session must never be
 * set in a browser, and a hit could not send it); and CORS grants (`access-control-*`), which the Worker itself
 * never gives (src/http/preflight.ts): before 11-28 both were relayed on misses, bypasses and pass-throughs.
 */
const DROP_RESPONSE = new Set(["content-encoding", "content-length", "transfer-encoding", "connection", "keep-alive", "set-cookie", "set-cookie2"]);

function relayed(name: string): boolean {
  const lower = name.toLowerCase();
  return !DROP_RESPONSE.has(lower) && !lower.startsWith("access-control-");
}

/** The var of Gemini's upstream, whose base URL names no API version: the path keeps its own (`/v1/`, `/v1beta/`). */
export const GEMINI_BASE_VAR = "GEMINI_BASE_URL";

/**
 * Headers that carry a credential meant for one provider only, by the var of the upstream it is meant for:
 * Google's `x-goog-api-key` never goes to the OpenAI or Anthropic upstream (docs/compat.md, "Gateways").
 */
const PROVIDER_CREDENTIALS: Readonly<Record<string, string>> = { "x-goog-api-key": GEMINI_BASE_VAR };

/**
 * Whether the upstream of `baseVar` receives, and is meant to read, every provider-bound credential of the
 * request: no header of PROVIDER_CREDENTIALS is kept from it, and no Gemini `?key=` goes to another upstream
 * (which forwards but never reads it). Only then does its 2xx say that it accepted the request's credential
 * (src/engine/key-freshness.ts).
 */
export function receivesEveryCredential(headers: Headers, baseVar = "UPSTREAM_BASE_URL", url?: string): boolean {
  for (const name in PROVIDER_CREDENTIALS) if (PROVIDER_CREDENTIALS[name] !== baseVar && headers.has(name)) return false;
  return baseVar === GEMINI_BASE_VAR || url === undefined || !new URL(url).searchParams.has("key");
}

/**
 * The upstream URL for a `/v1/...` path: `UPSTREAM_BASE_URL` replaces the `/v1` prefix. With `keepVersion`
 * (Gemini, whose base has no version) the path is appended whole.
 */
export function upstreamUrl(base: string, pathname: string, search = "", keepVersion = false): string {
  const rest = keepVersion ? pathname : pathname.replace(/^\/v1(?=\/|$)/, "");
  return `${base.replace(/\/+$/, "")}${rest}${search}`;
}

/**
 * The client's query string (`?api-version=…` for Azure, `?key=…` for Gemini) to send on with a request to
 * `pathname`; empty when the route's own path already carries a query.
 */
export function queryOf(requestUrl: string, pathname: string): string {
  return pathname.includes("?") ? "" : new URL(requestUrl).search;
}

/**
 * The headers sent upstream. A body given as text is the body the Worker read (decoded when it came
 * gzip or deflate, src/core/body.ts): its `content-encoding` no longer describes it.
 */
function forwardedHeaders(incoming: Headers, textBody: boolean, baseVar: string): Headers {
  const headers = new Headers();
  incoming.forEach((value, key) => {
    const name = key.toLowerCase();
    if (DROP_REQUEST.has(name) || name.startsWith(HEADER_PREFIX) || name === "cache-control") return;
    const meantFor = PROVIDER_CREDENTIALS[name];
    if (meantFor !== undefined && meantFor !== baseVar) return;
    if (textBody && name === "content-encoding") return;
    headers.set(key, value);
  });
  return headers;
}

/** An error as one short line: `Name: first line of the message`. */
function firstLine(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  // A URL in a runtime's message could carry a path or a query secret (`?key=`): keep only its host.
  return text
    .split("\n")[0]
    .replace(/\bhttps?:\/\/[^\s"']+/g, (url) => hostOf(url) ?? "[url]")
    .slice(0, 200);
}

/** The content encodings the runtime's fetch decodes (workerd: gzip, and br since `brotli_content_encoding`). */
const DECODED = new Set(["", "identity", "gzip", "br"]);

/**
 * Whether an upstream body is still encoded as the Worker reads it: a `content-encoding` the runtime does not
 * decode (`deflate`, `zstd`, a stack such as `gzip, br`). Such a body is relayed as sent with its header, and never
 * read as an answer.
 */
export function stillEncoded(headers: Headers): boolean {
  return !DECODED.has((headers.get("content-encoding") ?? "").trim().toLowerCase());
}

/**
 * Copies an upstream response, dropping the headers of DROP_RESPONSE and CORS grants, and adding ours. A body the
 * runtime decoded loses its `content-encoding` (the client gets it decoded); one still encoded keeps it and goes out
 * as its bytes.
 */
export function relayResponse(upstream: Response, body: BodyInit | null, extra: Record<string, string>): Response {
  const encoded = stillEncoded(upstream.headers);
  const headers = new Headers();
  upstream.headers.forEach((value, key) => {
    if (relayed(key) || (encoded && key.toLowerCase() === "content-encoding")) headers.set(key, value);
  });
  for (const [k, v] of Object.entries(extra)) headers.set(k, v);
  const init = { status: upstream.status, statusText: upstream.statusText, headers, encodeBody: encoded ? "manual" : "automatic" } as const;
  const response = new Response(body, init);
  // A body given as text or bytes gets a content-type of its own (`text/plain`) that the upstream never sent.
  if (!upstream.headers.has("content-type")) response.headers.delete("content-type");
  return response;
}

export interface ForwardOptions {
  base: string;
  pathname: string;
  search?: string;
  method: string;
  headers: Headers;
  body: BodyInit | null;
  signal?: AbortSignal;
  /** Give up when the upstream has not answered (status and headers) within this many ms; 0 or unset waits. */
  timeoutMs?: number;
  /** The var that sets `base` (`UPSTREAM_BASE_URL`, `ANTHROPIC_BASE_URL`), named when the upstream cannot be reached. */
  baseVar?: string;
}

/** The scheme, host and port of a base URL, never its path, query or credentials; null when it is no URL. */
export function hostOf(base: string): string | null {
  try {
    const url = new URL(base);
    return `${url.protocol}//${url.host}`;
  } catch {
    return null;
  }
}

/**
 * Sends the request on to the upstream unchanged (the client's Authorization
 * included), but for a credential meant for another provider (`x-goog-api-key` goes to Gemini only). A network failure becomes a 502 in the error envelope; an
 * upstream that sends no status within `timeoutMs` is cut, a 504. Once the
 * headers are in, the body streams at the upstream's pace (the client's
 * abort still cancels it).
 */
export async function forward(options: ForwardOptions): Promise<Response> {
  const limit = options.timeoutMs ?? 0;
  const client = options.signal;
  const timer = limit > 0 ? new AbortController() : undefined;
  const timeout = timer ? setTimeout(() => timer.abort(), limit) : undefined;
  // The client's abort reaches the upstream through the timer's signal (one listener costs less than AbortSignal.any);
  // it stays after the headers, so that an abort still cancels the body.
  if (timer && client) {
    if (client.aborted) timer.abort(client.reason);
    else client.addEventListener("abort", () => timer.abort(client.reason), { once: true });
  }
  const baseVar = options.baseVar ?? "UPSTREAM_BASE_URL";
  try {
    return await fetch(upstreamUrl(options.base, options.pathname, options.search, baseVar === GEMINI_BASE_VAR), {
      method: options.method,
      headers: forwardedHeaders(options.headers, typeof options.body === "string", baseVar),
      body: options.body,
      signal: timer ? timer.signal : client,
    });
  } catch (error) {
    if (timer?.signal.aborted && !options.signal?.aborted) {
      logEvent("error", "upstream_timeout", { timeout_ms: limit });
      throw new ApiError("upstream_timeout", `The upstream model did not answer within ${limit} ms (UPSTREAM_TIMEOUT_MS).`);
    }
    const host = hostOf(options.base) ?? "(not a URL)";
    const setting = options.baseVar ?? "UPSTREAM_BASE_URL";
    // One line: the host and the var, the error's name and first line, never a stack, a path or a key.
    logEvent("error", "upstream_unreachable", { host, var: setting, error: firstLine(error) });
    throw new ApiError("upstream_unreachable", `The upstream model at ${host} could not be reached. Check ${setting}, which sets it.`);
  } finally {
    clearTimeout(timeout);
  }
}
