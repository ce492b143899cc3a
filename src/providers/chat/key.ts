import { answerForm, canonicalConversation, canonicalJson, canonicalMessage, isCanonicalError, storedForm, type CanonicalError } from "../../core/canonical";
import { storedAnswerJson } from "../../core/stored-json";
import { bypassReason, frameJsonOf } from "../../core/frame";
import { childHash, treeIdOf, walk } from "../../core/hash";
import { DEFAULT_MAX_CACHEABLE_MESSAGE_BYTES, oversized } from "../../core/limits";
import type { CanonicalMessage, ChatMessage, ChatRequest } from "../../core/messages";
import type { RequestKey } from "../../cache/request-key";
import { keyDeclaredAnswer } from "../../cache/templates/declared";
import { bodySpellings, NUMBERS_KEY, type Spelling } from "../../core/number-text";
import { hasLoneSurrogate } from "../../core/unicode";
import type { UpstreamContext } from "../../core/upstream-frame";

export type { RequestKey };

export type KeyResult = { ok: true; key: RequestKey } | { ok: false; bypass: string } | { ok: false; invalid: { message: string; param: string } };

function failure(error: CanonicalError): KeyResult {
  return error.kind === "invalid" ? { ok: false, invalid: { message: error.message, param: error.param } } : { ok: false, bypass: error.reason };
}

/**
 * The hash forms of `messages`, each with the texts of its numbers written otherwise than JSON.stringify
 * would (`"weight": 1.0` in a field the canonical form keeps as sent: src/core/number-text.ts), by message
 * index (read from the live body's text); the messages themselves (stored as before) when there are none.
 */
function spelledMessages(messages: CanonicalMessage[], items: ReadonlyMap<number, Spelling[]> | undefined): CanonicalMessage[] {
  if (!items || items.size === 0) return messages;
  return messages.map((message, i) => {
    const numbers = items.get(i);
    return numbers ? { ...message, [NUMBERS_KEY]: numbers } : message;
  });
}

/**
 * Keys a validated request: frame, tree id, canonical messages and path hashes.
 * `context` is the live request's URL and headers (src/core/upstream-frame.ts); an imported line has none.
 */
export function keyRequest(
  body: ChatRequest,
  tenant: string,
  namespace: string,
  maxMessageBytes = DEFAULT_MAX_CACHEABLE_MESSAGE_BYTES,
  context?: UpstreamContext,
): KeyResult {
  const reason = bypassReason(body, context) ?? (hasLoneSurrogate(body) ? "lone surrogate" : null);
  if (reason) return { ok: false, bypass: reason };
  const canonical = canonicalConversation(body.messages);
  if (!canonical.ok) return failure(canonical.error);
  // The body's numbers written otherwise than JSON.stringify would, read once for the frame and the messages.
  const spelled = context?.raw === undefined ? undefined : (bodySpellings(context.raw, "messages") ?? { top: [], items: undefined });
  const frameJson = frameJsonOf(body, context, spelled?.top);
  const treeId = treeIdOf(tenant, namespace, frameJson);
  const path = walk(treeId, spelledMessages(canonical.messages, spelled?.items), canonical.stored);
  const tooLarge = oversized(frameJson, path, maxMessageBytes);
  if (tooLarge) return { ok: false, bypass: tooLarge };
  return {
    ok: true,
    key: {
      tenant,
      namespace,
      treeId,
      frameJson,
      model: body.model,
      path,
      key: path[path.length - 1].hash,
      ids: canonical.ids,
      ...(spelled?.items && spelled.items.size > 0 ? { numbers: spelled.items } : {}),
    },
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
  return { hash: childHash(key.key, canonicalJson(canonical)), json: storedAnswerJson(stored), message: stored };
}
