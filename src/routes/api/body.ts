import { ApiError } from "../../errors";

/** Reads a request body as UTF-8 text within `maxBytes` (413 above it, 400 for bad UTF-8). */
export async function readBoundedText(request: Request, maxBytes: number): Promise<string> {
  const tooLarge = () => new ApiError("body_too_large", `The request body exceeds the limit of ${maxBytes} bytes (MAX_BODY_BYTES).`);
  if (Number(request.headers.get("content-length") ?? "0") > maxBytes) throw tooLarge();
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
      throw tooLarge();
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
