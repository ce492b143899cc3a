import { canonicalConversation, canonicalJson, canonicalMessage, storedForm, type CanonicalError, type ToolCallIds } from "./canonical";
import { bypassReason, frameJsonOf } from "./frame";
import { childHash, treeIdOf, walk, type PathStep } from "./hash";
import type { CanonicalMessage, ChatMessage, ChatRequest } from "./messages";
import { keyDeclaredAnswer, type DeclaredKeying } from "./templates/declared";

/** Where a request sits in the trees: its tree, its path and h_n, the node whose answer it asks for. */
export interface RequestKey {
  tenant: string;
  namespace: string;
  treeId: string;
  frameJson: string;
  model: string;
  path: PathStep[];
  /** h_n: the parent of the answer. */
  key: string;
  ids: ToolCallIds;
  /** Set when the request is keyed with declared variables (placeholders): its answers are stored abstracted. */
  declared?: DeclaredKeying;
}

export type KeyResult =
  | { ok: true; key: RequestKey }
  | { ok: false; bypass: string }
  | { ok: false; invalid: { message: string; param: string } };

function failure(error: CanonicalError): KeyResult {
  return error.kind === "invalid" ? { ok: false, invalid: { message: error.message, param: error.param } } : { ok: false, bypass: error.reason };
}

/** Keys a validated request: frame, tree id, canonical messages and path hashes. */
export function keyRequest(body: ChatRequest, tenant: string, namespace: string): KeyResult {
  const reason = bypassReason(body);
  if (reason) return { ok: false, bypass: reason };
  const canonical = canonicalConversation(body.messages);
  if (!canonical.ok) return failure(canonical.error);
  const frameJson = frameJsonOf(body);
  const treeId = treeIdOf(tenant, namespace, frameJson);
  const path = walk(treeId, canonical.messages, canonical.stored);
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
  if ("kind" in canonical) return null;
  if (key.declared) return keyDeclaredAnswer(key.key, canonical, key.declared);
  const stored = storedForm(canonical, message);
  return { hash: childHash(key.key, canonicalJson(canonical)), json: canonicalJson(stored), message: stored };
}
