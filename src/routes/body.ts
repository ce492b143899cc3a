import type { z } from "zod";
import { ApiError } from "../errors";

function tooLarge(maxBytes: number): ApiError {
  return new ApiError("body_too_large", `The request body exceeds the limit of ${maxBytes} bytes (MAX_BODY_BYTES).`);
}

/** Reads a request body as UTF-8 text within `maxBytes` (413 above it, 400 for bad UTF-8). */
export async function readBoundedText(request: Request, maxBytes: number): Promise<string> {
  if (Number(request.headers.get("content-length") ?? "0") > maxBytes) throw tooLarge(maxBytes);
  if (!request.body) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw tooLarge(maxBytes);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new ApiError("invalid_json", "The request body is not valid UTF-8.");
  }
}

/**
 * Reads a JSON request body within `maxBytes` and validates it with `schema`;
 * every failure is a 4xx ApiError (415, 413, 400). Every route that parses a
 * JSON body goes through here.
 */
export async function parseJsonBody<S extends z.ZodType>(request: Request, maxBytes: number, schema: S): Promise<{ raw: string; body: z.infer<S> }> {
  const type = request.headers.get("content-type") ?? "";
  if (type && !/^application\/json\b/i.test(type.trim())) {
    throw new ApiError("unsupported_media_type", `Content-Type must be application/json, got '${type.slice(0, 80)}'`);
  }
  const raw = await readBoundedText(request, maxBytes);
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new ApiError("invalid_json", "The request body is not valid JSON.");
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const param = issue.path.map(String).join(".") || null;
    throw new ApiError("invalid_request", `${param ? `'${param}': ` : ""}${issue.message}`, param);
  }
  return { raw, body: parsed.data };
}
