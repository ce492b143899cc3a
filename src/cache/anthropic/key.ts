import { canonicalJson, type CanonicalError } from "../canonical";
import { DEFAULT_MAX_CACHEABLE_MESSAGE_BYTES, hasLoneSurrogate, oversized } from "../key";
import { childHash, treeIdOf } from "../hash";
import { canonicalAnthropicConversation, canonicalAnthropicMessage, isAnthropicError, type ToolUseIds } from "./canonical";
import { anthropicBypassReason, anthropicFrameJsonOf } from "./frame";
import type { AnthropicCanonicalMessage, AnthropicMessage, MessagesRequest } from "./schema";

/** One step of a walk: the node's hash, its parent, its role and its canonical message JSON. */
export interface AnthropicPathStep {
  hash: string;
  parent: string;
  role: AnthropicCanonicalMessage["role"];
  json: string;
}

/** The path from the root to h_n: h_i = H(h_{i-1}, canonical(m_i)), as for chat trees. */
export function walkAnthropic(root: string, messages: readonly AnthropicCanonicalMessage[]): AnthropicPathStep[] {
  const steps: AnthropicPathStep[] = [];
  let parent = root;
  for (const message of messages) {
    const json = canonicalJson(message);
    const hash = childHash(parent, json);
    steps.push({ hash, parent, role: message.role, json });
    parent = hash;
  }
  return steps;
}

/** Where a Messages request sits in the trees: its tree, its path and h_n. */
export interface AnthropicKey {
  tenant: string;
  namespace: string;
  treeId: string;
  frameJson: string;
  model: string;
  path: AnthropicPathStep[];
  /** h_n: the parent of the answer. */
  key: string;
  ids: ToolUseIds;
}

export type AnthropicKeyResult =
  | { ok: true; key: AnthropicKey }
  | { ok: false; bypass: string }
  | { ok: false; invalid: { message: string; param: string } };

function failure(error: CanonicalError): AnthropicKeyResult {
  return error.kind === "invalid" ? { ok: false, invalid: { message: error.message, param: error.param } } : { ok: false, bypass: error.reason };
}

/**
 * Keys a validated Messages request: frame (with the API name, the frame headers
 * and the query string of `url`, a live request's), tree id, canonical messages, path hashes.
 */
export function keyMessagesRequest(
  body: MessagesRequest,
  headers: Headers,
  tenant: string,
  namespace: string,
  maxMessageBytes = DEFAULT_MAX_CACHEABLE_MESSAGE_BYTES,
  url?: URL,
): AnthropicKeyResult {
  const reason = anthropicBypassReason(body, url) ?? (hasLoneSurrogate(body) ? "lone surrogate" : null);
  if (reason) return { ok: false, bypass: reason };
  const canonical = canonicalAnthropicConversation(body.messages);
  if (!canonical.ok) return failure(canonical.error);
  const frameJson = anthropicFrameJsonOf(body, headers, url);
  const treeId = treeIdOf(tenant, namespace, frameJson);
  const path = walkAnthropic(treeId, canonical.messages);
  const tooLarge = oversized(frameJson, path, maxMessageBytes);
  if (tooLarge) return { ok: false, bypass: tooLarge };
  return {
    ok: true,
    key: { tenant, namespace, treeId, frameJson, model: body.model, path, key: path[path.length - 1].hash, ids: canonical.ids },
  };
}

/** Answer block fields a replay can render; an answer with any other (citations, …) is not recorded. */
const RENDERABLE: Record<string, ReadonlySet<string>> = { text: new Set(["type", "text"]), tool_use: new Set(["type", "id", "name", "input"]) };

/**
 * Canonicalises the model's answer, numbering its `tool_use` ids after those
 * of the conversation, and hashes it as a child of h_n. `inputTexts[i]` is
 * the i-th tool_use's input as the model wrote it: stored as `input_json`
 * (never hashed) when it parses to that input, so that a replay serves it.
 * Null when the answer is not cacheable or holds fields a replay cannot render.
 */
export function keyAnthropicAnswer(
  key: AnthropicKey,
  message: AnthropicMessage,
  inputTexts: ReadonlyArray<string | undefined> = [],
): { hash: string; json: string; message: AnthropicCanonicalMessage } | null {
  const canonical = canonicalAnthropicMessage(message, key.ids.clone(), key.path.length);
  if (isAnthropicError(canonical)) return null;
  if (Object.keys(canonical).length !== 2) return null;
  for (const block of canonical.content) {
    const read = RENDERABLE[block.type];
    if (!read || Object.keys(block).some((k) => !read.has(k))) return null;
  }
  const json = canonicalJson(canonical);
  let uses = 0;
  const stored = {
    ...canonical,
    content: canonical.content.map((block) => {
      if (block.type !== "tool_use") return block;
      const text = inputTexts[uses++];
      return text !== undefined && sameJson(text, block.input) ? { ...block, input_json: text } : block;
    }),
  };
  return { hash: childHash(key.key, json), json: canonicalJson(stored), message: stored };
}

function sameJson(text: string, value: unknown): boolean {
  try {
    return canonicalJson(JSON.parse(text)) === canonicalJson(value);
  } catch {
    return false;
  }
}
