import type { CanonicalError } from "../../core/canonical";
import {
  KEYED_ROLES,
  type AnthropicCanonicalMessage,
  type AnthropicMessage,
  type CanonicalBlock,
  type CanonicalText,
  type ContentBlock,
  type KeyedRole,
} from "./schema";

export type AnthropicCanonicalResult = { ok: true; messages: AnthropicCanonicalMessage[]; ids: ToolUseIds } | { ok: false; error: CanonicalError };

/**
 * Maps the `tool_use` ids of one conversation to ordinals (`toolu_0`, …) in
 * order of appearance; the same map canonicalises the `tool_result`s that answer them.
 */
export class ToolUseIds {
  private readonly byId = new Map<string, string>();

  /** Assigns the next ordinal to `id` (a repeated id keeps its first ordinal). */
  assign(id: string): string {
    const known = this.byId.get(id);
    if (known) return known;
    const ordinal = `toolu_${this.byId.size}`;
    this.byId.set(id, ordinal);
    return ordinal;
  }

  lookup(id: string): string | undefined {
    return this.byId.get(id);
  }

  /** An independent copy, so that keying an answer never changes the request's map. */
  clone(): ToolUseIds {
    const copy = new ToolUseIds();
    for (const id of this.byId.keys()) copy.assign(id);
    return copy;
  }
}

type Blocks = string | readonly ContentBlock[];

/**
 * Block fields the cache reads, by type; any other field is keyed as sent,
 * except the ignore list: `cache_control` (a prompt-caching hint) and null
 * values (`citations: null`), which never change the answer.
 */
const READ_BLOCK_FIELDS: Record<string, ReadonlySet<string>> = {
  text: new Set(["type", "text"]),
  tool_use: new Set(["type", "id", "name", "input"]),
  tool_result: new Set(["type", "tool_use_id", "content", "is_error"]),
  thinking: new Set(["type", "thinking", "signature"]),
  redacted_thinking: new Set(["type", "data"]),
};
const IGNORED_FIELDS = new Set(["cache_control"]);

/** Whether a tool call's `caller` is the default, `{type: "direct"}` (the model called the tool itself), and nothing else. */
export function isDirectCaller(value: unknown): boolean {
  return (
    typeof value === "object" && value !== null && !Array.isArray(value) && Object.keys(value).length === 1 && (value as { type?: unknown }).type === "direct"
  );
}

/** The fields of `value` outside `read` and the ignore list, as sent. */
export function extraFields(value: Record<string, unknown>, read: ReadonlySet<string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (!read.has(k) && !IGNORED_FIELDS.has(k) && v !== null && v !== undefined) out[k] = v;
  return out;
}

/** Text as canonical blocks; empty text is dropped (the API rejects it, and SDKs differ in echoing it). */
function textBlocks(content: Blocks | undefined): CanonicalText[] | null {
  if (content === undefined) return [];
  if (typeof content === "string") return content === "" ? [] : [{ type: "text", text: content }];
  if (!Array.isArray(content)) return null; // not the API's shape: the upstream judges it
  const out: CanonicalText[] = [];
  for (const block of content as readonly ContentBlock[]) {
    if (typeof block !== "object" || block === null || block.type !== "text" || typeof block.text !== "string") return null;
    if (block.text !== "") out.push({ ...extraFields(block, READ_BLOCK_FIELDS.text), type: "text", text: block.text });
  }
  return out;
}

/** Whether a canonicalisation result is an error (blocks have a type, messages a role; errors neither). */
export function isAnthropicError<T extends object>(value: T | CanonicalError): value is CanonicalError {
  return !("type" in value) && !("role" in value);
}

function uncacheable(reason: string): CanonicalError {
  return { kind: "uncacheable", reason };
}

/** One content block in canonical form; `cache_control` and null fields are dropped, other fields keyed. */
function canonicalBlock(block: ContentBlock, ids: ToolUseIds, where: string): CanonicalBlock | CanonicalError {
  switch (block.type) {
    case "text":
      if (typeof block.text !== "string") return { kind: "invalid", message: `${where}.text must be a string`, param: `${where}.text` };
      return { ...extraFields(block, READ_BLOCK_FIELDS.text), type: "text", text: block.text };
    case "tool_use": {
      if (typeof block.id !== "string" || block.id === "" || typeof block.name !== "string") {
        return { kind: "invalid", message: `${where} needs a non-empty id and a name`, param: where };
      }
      const extra = extraFields(block, READ_BLOCK_FIELDS.tool_use);
      // `caller: {type: "direct"}` is the API's default (the model called the tool itself): the same call as none.
      if (isDirectCaller(extra.caller)) delete extra.caller;
      return { ...extra, type: "tool_use", id: ids.assign(block.id), name: block.name, input: block.input ?? {} };
    }
    case "tool_result": {
      const ordinal = typeof block.tool_use_id === "string" ? ids.lookup(block.tool_use_id) : undefined;
      // The call may live upstream (threads, compaction): the model judges, the cache steps aside.
      if (!ordinal) return uncacheable("tool_result without its tool_use in the request");
      const content = textBlocks(block.content as Blocks | undefined);
      if (!content) return uncacheable("non-text tool_result content");
      const out: CanonicalBlock = { ...extraFields(block, READ_BLOCK_FIELDS.tool_result), type: "tool_result", tool_use_id: ordinal, content };
      if (block.is_error === true) out.is_error = true;
      else if (block.is_error !== false && block.is_error !== undefined && block.is_error !== null) return uncacheable("is_error is not a boolean");
      return out;
    }
    case "thinking":
      // Thinking sent back (an agent keeps it in its history): keyed with its signature, as the model reads it.
      if (typeof block.thinking !== "string" || typeof block.signature !== "string") return uncacheable("thinking block without its text and signature");
      return { ...extraFields(block, READ_BLOCK_FIELDS.thinking), type: "thinking", thinking: block.thinking, signature: block.signature };
    case "redacted_thinking":
      if (typeof block.data !== "string") return uncacheable("redacted_thinking block without data");
      return { ...extraFields(block, READ_BLOCK_FIELDS.redacted_thinking), type: "redacted_thinking", data: block.data };
    default:
      return uncacheable(`${block.type} content block`);
  }
}

/** Puts one message in canonical form: content as a list of blocks, tool ids as ordinals. */
export function canonicalAnthropicMessage(message: AnthropicMessage, ids: ToolUseIds, index: number): AnthropicCanonicalMessage | CanonicalError {
  const role = keyedRole(message.role);
  // A role the cache does not know: the upstream judges it (never a 400 of ours), the cache steps aside.
  if (role === null) return uncacheable(`${message.role.slice(0, 40)} role`);
  const blocks: readonly ContentBlock[] = typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
  const content: CanonicalBlock[] = [];
  for (let i = 0; i < blocks.length; i++) {
    const block = canonicalBlock(blocks[i], ids, `messages[${index}].content[${i}]`);
    if (isAnthropicError(block)) return block;
    if (block.type === "text" && block.text === "") continue;
    content.push(block);
  }
  return { ...extraFields(message, MESSAGE_FIELDS), role, content };
}

function keyedRole(role: string): KeyedRole | null {
  return (KEYED_ROLES as readonly string[]).includes(role) ? (role as KeyedRole) : null;
}

const MESSAGE_FIELDS = new Set(["role", "content"]);

/** Canonicalises a whole conversation, numbering `tool_use` ids in order of appearance. */
export function canonicalAnthropicConversation(messages: readonly AnthropicMessage[]): AnthropicCanonicalResult {
  const ids = new ToolUseIds();
  const out: AnthropicCanonicalMessage[] = [];
  for (let i = 0; i < messages.length; i++) {
    const canonical = canonicalAnthropicMessage(messages[i], ids, i);
    if (isAnthropicError(canonical)) return { ok: false, error: canonical };
    out.push(canonical);
  }
  return { ok: true, messages: out, ids };
}
