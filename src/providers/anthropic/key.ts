import { canonicalJson, type CanonicalError } from "../../core/canonical";
import { DEFAULT_MAX_CACHEABLE_MESSAGE_BYTES, oversized } from "../../core/limits";
import { hasLoneSurrogate } from "../../core/unicode";
import { childHash, treeIdOf } from "../../core/hash";
import { canonicalAnthropicConversation, canonicalAnthropicMessage, isAnthropicError, isDirectCaller, type ToolUseIds } from "./canonical";
import { bodySpellings, NUMBERS_KEY, type Spelling } from "../../core/number-text";
import { anthropicBypassReason, anthropicFrameJsonOf } from "./frame";
import type { AnthropicCanonicalMessage, AnthropicMessage, CanonicalBlock, ContentBlock, MessagesRequest } from "./schema";

/** One step of a walk: the node's hash, its parent, its role and its canonical message JSON. */
export interface AnthropicPathStep {
  hash: string;
  parent: string;
  role: AnthropicCanonicalMessage["role"];
  json: string;
}

/**
 * The path from the root to h_n: h_i = H(h_{i-1}, canonical(m_i)), as for chat trees. The hash of a
 * message with numbers written otherwise than JSON.stringify would (`spelled`, by message index: a
 * `tool_use.input` of `{"qty": 1.0}` echoed by a Python client) also reads their texts; `json`, the
 * node as stored, never holds them.
 */
export function walkAnthropic(
  root: string,
  messages: readonly AnthropicCanonicalMessage[],
  spelled?: ReadonlyMap<number, readonly Spelling[]>,
): AnthropicPathStep[] {
  const steps: AnthropicPathStep[] = [];
  let parent = root;
  for (const [i, message] of messages.entries()) {
    const json = canonicalJson(message);
    const numbers = spelled?.get(i);
    const hash = childHash(parent, numbers ? canonicalJson({ ...message, [NUMBERS_KEY]: numbers }) : json);
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

export type AnthropicKeyResult = { ok: true; key: AnthropicKey } | { ok: false; bypass: string } | { ok: false; invalid: { message: string; param: string } };

function failure(error: CanonicalError): AnthropicKeyResult {
  return error.kind === "invalid" ? { ok: false, invalid: { message: error.message, param: error.param } } : { ok: false, bypass: error.reason };
}

/**
 * Keys a validated Messages request: frame (with the API name, the frame headers
 * and, for a `live` request, its query string and the texts of numbers JSON.parse
 * would merge), tree id, canonical messages, path hashes.
 */
export function keyMessagesRequest(
  body: MessagesRequest,
  headers: Headers,
  tenant: string,
  namespace: string,
  maxMessageBytes = DEFAULT_MAX_CACHEABLE_MESSAGE_BYTES,
  live?: { url: URL; raw: string },
): AnthropicKeyResult {
  const reason = anthropicBypassReason(body, live?.url) ?? (hasLoneSurrogate(body) ? "lone surrogate" : null);
  if (reason) return { ok: false, bypass: reason };
  const canonical = canonicalAnthropicConversation(body.messages);
  if (!canonical.ok) return failure(canonical.error);
  const spelled = live ? bodySpellings(live.raw, "messages") : null;
  const frameJson = anthropicFrameJsonOf(body, headers, live?.url, spelled?.top);
  const treeId = treeIdOf(tenant, namespace, frameJson);
  const path = walkAnthropic(treeId, canonical.messages, spelled?.items);
  const tooLarge = oversized(frameJson, path, maxMessageBytes);
  if (tooLarge) return { ok: false, bypass: tooLarge };
  return {
    ok: true,
    key: { tenant, namespace, treeId, frameJson, model: body.model, path, key: path[path.length - 1].hash, ids: canonical.ids },
  };
}

/** Answer block fields a replay can render; an answer with any other (citations, …) is not recorded. */
const RENDERABLE: Record<string, ReadonlySet<string>> = {
  text: new Set(["type", "text"]),
  tool_use: new Set(["type", "id", "name", "input"]),
  thinking: new Set(["type", "thinking", "signature"]),
  redacted_thinking: new Set(["type", "data"]),
};

/**
 * Canonicalises the model's answer, numbering its `tool_use` ids after those
 * of the conversation, and hashes it as a child of h_n. The node stores the
 * blocks as the model sent them (an empty text block, a null field), ids aside:
 * a hit serves them back. `inputTexts[i]` is the i-th tool_use's input as the
 * model wrote it: stored as `input_json` (never hashed) when it parses to that
 * input, so that a replay serves it. A `caller: {type: "direct"}` is left out of
 * the hash and stored. Null when the answer is not cacheable or holds fields a
 * replay cannot render.
 */
export function keyAnthropicAnswer(
  key: AnthropicKey,
  message: AnthropicMessage,
  inputTexts: ReadonlyArray<string | undefined> = [],
): { hash: string; json: string; message: AnthropicCanonicalMessage } | null {
  const canonical = canonicalAnthropicMessage(message, key.ids.clone(), key.path.length);
  if (isAnthropicError(canonical) || canonical.role !== "assistant") return null;
  if (Object.keys(canonical).length !== 2) return null;
  for (const block of canonical.content) {
    const read = RENDERABLE[block.type];
    if (!read || Object.keys(block).some((k) => !read.has(k))) return null;
  }
  const json = canonicalJson(canonical);
  const sent: readonly ContentBlock[] = typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
  const calls = canonical.content.filter((block) => block.type === "tool_use");
  let uses = 0;
  const content = sent.map((block): CanonicalBlock => {
    if (block.type === "thinking") return { ...block, type: "thinking", thinking: block.thinking as string, signature: block.signature as string };
    if (block.type === "redacted_thinking") return { ...block, type: "redacted_thinking", data: block.data as string };
    if (block.type !== "tool_use") return { ...block, type: "text", text: block.text as string };
    const i = uses++;
    const call = calls[i];
    const text = inputTexts[i];
    const caller = isDirectCaller(block.caller) ? { caller: { type: "direct" } } : {};
    const { id: _id, input: _input, caller: _caller, ...asSent } = block;
    return { ...asSent, ...call, ...(text !== undefined && sameJson(text, call.input) ? { input_json: text } : {}), ...caller };
  });
  const stored = { role: canonical.role, content };
  return { hash: childHash(key.key, json), json: canonicalJson(stored), message: stored };
}

function sameJson(text: string, value: unknown): boolean {
  try {
    return canonicalJson(JSON.parse(text)) === canonicalJson(value);
  } catch {
    return false;
  }
}
