import type { PathStep } from "./hash";

/**
 * The largest stored message or frame, in UTF-8 bytes, that the cache keeps
 * (`MAX_CACHEABLE_MESSAGE_BYTES`). D1 rejects a row over 1,000,000 bytes and a
 * node or tree row holds one of these plus under 1 KB of columns; a request
 * with a larger one is bypassed (docs/limits.md).
 */
export const DEFAULT_MAX_CACHEABLE_MESSAGE_BYTES = 900_000;

const utf8 = new TextEncoder();

/** Whether a stored JSON text is over `maxBytes` in UTF-8 (a UTF-8 byte count is at most 3x the UTF-16 length: what cannot be too large is not encoded). */
export function overBytes(json: string, maxBytes: number): boolean {
  return json.length * 3 > maxBytes && utf8.encode(json).byteLength > maxBytes;
}

/** Why the frame or a message is too large to store as one row, or null (both APIs). */
export function oversized(frameJson: string, path: ReadonlyArray<Pick<PathStep, "json">>, maxBytes: number): string | null {
  const tooBig = (json: string) => overBytes(json, maxBytes);
  if (tooBig(frameJson)) return "frame too large";
  return path.some((step) => tooBig(step.json)) ? "message too large" : null;
}
