import type { z } from "zod";
import { MAX_JSON_DEPTH, scanJson } from "./exact-json";
import { ApiError } from "./errors";

function tooLarge(maxBytes: number): ApiError {
  return new ApiError("body_too_large", `The request body exceeds the limit of ${maxBytes} bytes (MAX_BODY_BYTES).`);
}

/** The Content-Encodings a request body is decoded from, by the name DecompressionStream knows them. */
const DECODABLE: Readonly<Record<string, CompressionFormat>> = { gzip: "gzip", "x-gzip": "gzip", deflate: "deflate" };

/**
 * The format to decode a body from (null when it is sent plain): a client that compresses its body is
 * read as the JSON it holds. An encoding DecompressionStream cannot undo (`br`, a list) is a 415.
 */
function encodingOf(request: Request): CompressionFormat | null {
  const encoding = (request.headers.get("content-encoding") ?? "").trim().toLowerCase();
  if (encoding === "" || encoding === "identity") return null;
  const format = DECODABLE[encoding];
  if (!format)
    throw new ApiError("unsupported_media_type", `Content-Encoding '${encoding.slice(0, 40)}' is not supported: send the body plain, gzip or deflate.`);
  return format;
}

/**
 * The body's text, chunk by chunk as it arrives, within `maxBytes` (413 as soon as it passes them; 400 for
 * bad UTF-8 or a body that fails to decode from its Content-Encoding, the limit counting the decoded bytes).
 * Each chunk's bytes are decoded and dropped before the next is read, so a body is never held as bytes and
 * as text at once.
 */
export async function* bodyText(request: Request, maxBytes: number): AsyncGenerator<string> {
  const declared = request.headers.get("content-length");
  if (Number(declared ?? "0") > maxBytes) throw tooLarge(maxBytes);
  const format = encodingOf(request);
  if (!request.body) return;
  const stream = format ? request.body.pipeThrough(new DecompressionStream(format)) : request.body;
  const reader = stream.getReader();
  // A decoder per body: streaming decode keeps a split character's first bytes between chunks.
  const utf8 = new TextDecoder("utf-8", { fatal: true });
  let size = 0;
  try {
    for (;;) {
      let next: ReadableStreamReadResult<Uint8Array>;
      try {
        next = await reader.read();
      } catch (error) {
        if (format) throw new ApiError("invalid_json", `The request body is not valid ${format} (Content-Encoding).`);
        throw error;
      }
      if (next.done) break;
      size += next.value.byteLength;
      if (size > maxBytes) throw tooLarge(maxBytes);
      yield decodeUtf8(utf8, next.value, true);
    }
    yield decodeUtf8(utf8, new Uint8Array(0), false);
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

function decodeUtf8(decoder: TextDecoder, bytes: Uint8Array, more: boolean): string {
  try {
    return decoder.decode(bytes, { stream: more });
  } catch {
    throw new ApiError("invalid_json", "The request body is not valid UTF-8.");
  }
}

/**
 * Reads a request body as UTF-8 text within `maxBytes` (413 above it, 400 for bad UTF-8), decoding each
 * chunk as it arrives (bodyText). A gzip or deflate body (Content-Encoding) is decoded, the limit counting
 * the decoded bytes; the forwarded text then goes without the header (src/upstream/forward.ts).
 */
export async function readBoundedText(request: Request, maxBytes: number): Promise<string> {
  let text = "";
  for await (const part of bodyText(request, maxBytes)) text += part;
  return text;
}

/**
 * Parses JSON text and scans it once (src/core/exact-json.ts): nesting
 * deeper than MAX_JSON_DEPTH is a 400 (`where` names the line of an import);
 * `lossy` says why the parsed value is not exactly the text (a request that
 * says so bypasses the cache), null when it is.
 */
export function parseExactJson(text: string, where?: string): { json: unknown; lossy: string | null } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ApiError("invalid_json", where ? `${where} is not valid JSON.` : "The request body is not valid JSON.", where ?? null);
  }
  const scan = scanJson(text);
  if (scan.depth > MAX_JSON_DEPTH) {
    throw new ApiError(
      "invalid_request",
      `${where ? `${where}: ` : ""}JSON nested ${scan.depth} levels deep; the limit is ${MAX_JSON_DEPTH} (docs/limits.md).`,
      where ?? null,
    );
  }
  return { json, lossy: scan.lossy };
}

/** The body of a JSON request as text within `maxBytes`: 415 for another content type, 413 above the limit, 400 for bad UTF-8. */
export async function readJsonText(request: Request, maxBytes: number): Promise<string> {
  const type = request.headers.get("content-type") ?? "";
  if (type && !/^application\/json\b/i.test(type.trim())) {
    throw new ApiError("unsupported_media_type", `Content-Type must be application/json, got '${type.slice(0, 80)}'`);
  }
  return readBoundedText(request, maxBytes);
}

/** Shallow checks of schemas (withShallowCheck): true only for a value the schema accepts as it is. */
const shallowChecks = new WeakMap<z.ZodType, (json: unknown) => boolean>();

/**
 * `schema`, with a check that parseJsonText runs first: a value it passes is used as parsed, without
 * zod's walk and copy. It must pass only values `schema` accepts and would output unchanged but for key
 * order (which no key depends on: canonical JSON sorts keys); any other value goes to zod, errors included.
 */
export function withShallowCheck<S extends z.ZodType>(schema: S, accepts: (json: unknown) => boolean): S {
  shallowChecks.set(schema, accepts);
  return schema;
}

/**
 * Parses JSON text (parseExactJson) and validates it with `schema`: every failure is a 400 ApiError.
 * `lossy` is why the body cannot be keyed exactly, null when it can. The cached flow reads, then parses
 * (src/engine/keying.ts), so that it can skip parsing a request it has seen. An exact body that the
 * schema's shallow check passes (withShallowCheck) is not walked by zod.
 */
export function parseJsonText<S extends z.ZodType>(raw: string, schema: S): { body: z.infer<S>; lossy: string | null } {
  const { json, lossy } = parseExactJson(raw);
  // SAFETY: the check passes only values the schema accepts unchanged (withShallowCheck).
  if (lossy === null && shallowChecks.get(schema)?.(json)) return { body: json as z.infer<S>, lossy };
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const param = issue.path.map(String).join(".") || null;
    throw new ApiError("invalid_request", `${param ? `'${param}': ` : ""}${issue.message}`, param);
  }
  return { body: parsed.data, lossy };
}
