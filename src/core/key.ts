import { answerForm, canonicalConversation, canonicalJson, canonicalMessage, isCanonicalError, storedForm, type CanonicalError } from "./canonical";
import { bypassReason, frameJsonOf } from "./frame";
import { childHash, treeIdOf, walk, type PathStep } from "./hash";
import type { CanonicalMessage, ChatMessage, ChatRequest } from "./messages";
import type { RequestKey } from "./request-key";
import { keyDeclaredAnswer } from "../cache/templates/declared";
import { hasLoneSurrogate } from "./unicode";
import type { UpstreamContext } from "./upstream-frame";

export { hasLoneSurrogate };
export type { RequestKey };

export type KeyResult =
  | { ok: true; key: RequestKey }
  | { ok: false; bypass: string }
  | { ok: false; invalid: { message: string; param: string } };

function failure(error: CanonicalError): KeyResult {
  return error.kind === "invalid" ? { ok: false, invalid: { message: error.message, param: error.param } } : { ok: false, bypass: error.reason };
}

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


/**
 * Keys a validated request: frame, tree id, canonical messages and path hashes.
 * `context` is the live request's URL and headers (src/core/upstream-frame.ts); an imported line has none.
 */
export function keyRequest(body: ChatRequest, tenant: string, namespace: string, maxMessageBytes = DEFAULT_MAX_CACHEABLE_MESSAGE_BYTES, context?: UpstreamContext): KeyResult {
  const reason = bypassReason(body, context) ?? (hasLoneSurrogate(body) ? "lone surrogate" : null);
  if (reason) return { ok: false, bypass: reason };
  const canonical = canonicalConversation(body.messages);
  if (!canonical.ok) return failure(canonical.error);
  const frameJson = frameJsonOf(body, context);
  const treeId = treeIdOf(tenant, namespace, frameJson);
  const path = walk(treeId, canonical.messages, canonical.stored);
  const tooLarge = oversized(frameJson, path, maxMessageBytes);
  if (tooLarge) return { ok: false, bypass: tooLarge };
  return {
    ok: true,
    key: { tenant, namespace, treeId, frameJson, model: body.model, path, key: path[path.length - 1].hash, ids: canonical.ids },
  };
}

/**
 * Canonicalises the model's answer to a keyed request, numbering its tool
 * calls after those of the conversation, and hashes it as a child of h_n.
 * `json` is the stored form (arguments as the model wrote them).
 * Null when the answer is not cacheable.
 */
export function keyAnswer(key: RequestKey, message: ChatMessage): { hash: string; json: string; message: CanonicalMessage } | null {
  const canonical = canonicalMessage(message, key.ids, key.path.length);
  if (isCanonicalError(canonical)) return null;
  const stored = answerForm(storedForm(canonical, message), message);
  if (key.declared) return keyDeclaredAnswer(key.key, stored, key.declared);
  return { hash: childHash(key.key, canonicalJson(canonical)), json: canonicalJson(stored), message: stored };
}
