import canonicalize from "canonicalize";
import { BoundedMemo } from "./memo";
import type { CanonicalMessage, CanonicalToolCall, ChatMessage, ToolCall } from "./messages";

/** Why a conversation cannot be put in canonical form. */
export type CanonicalError =
  | { kind: "uncacheable"; reason: string }
  | { kind: "invalid"; message: string; param: string };

export type CanonicalResult =
  | { ok: true; messages: CanonicalMessage[]; stored: CanonicalMessage[]; ids: ToolCallIds }
  | { ok: false; error: CanonicalError };

/**
 * Maps the tool-call ids of one conversation to ordinals, in order of appearance.
 * The same map canonicalises the tool results that answer them.
 */
export class ToolCallIds {
  private readonly byId = new Map<string, string>();

  get count(): number {
    return this.byId.size;
  }

  /** Assigns the next ordinal to `id` (a repeated id keeps its first ordinal). */
  assign(id: string): string {
    const known = this.byId.get(id);
    if (known) return known;
    const ordinal = `call_${this.byId.size}`;
    this.byId.set(id, ordinal);
    return ordinal;
  }

  lookup(id: string): string | undefined {
    return this.byId.get(id);
  }
}

/** Serialises a value as RFC 8785 canonical JSON. */
export function canonicalJson(value: unknown): string {
  return canonicalize(value) ?? "null";
}

/** Canonical JSON of large values seen again and again (the frame: model and a 14-tool schema). */
const knownCanonical = new BoundedMemo<string>(4 * 1024 * 1024, (json) => json.length);

/**
 * `canonicalJson` through an isolate memo keyed by JSON.stringify (about 4x
 * cheaper than RFC 8785 on a tool schema). Equal stringify output means an
 * equal value, so the memo never changes the result.
 */
export function canonicalJsonMemo(value: unknown): string {
  const key = JSON.stringify(value) ?? "undefined";
  const known = knownCanonical.get(key);
  if (known !== undefined) return known;
  const json = canonicalJson(value);
  knownCanonical.set(key, json);
  return json;
}

/** Tool-call arguments with sorted keys; arguments that are not JSON stay as they were sent. */
export function canonicalArguments(raw: string): string {
  try {
    return canonicalJson(JSON.parse(raw));
  } catch {
    return raw;
  }
}

type Parts = ReadonlyArray<{ type: string; [k: string]: unknown }>;

/** Text content as a string (one part) or a list of strings (several); null if a part is not text. */
function textContent(content: string | Parts): { text?: string | string[]; refusal?: string } | null {
  if (typeof content === "string") return content === "" ? {} : { text: content };
  const texts: string[] = [];
  let refusal: string | undefined;
  for (const part of content) {
    if (part.type === "text" && typeof part.text === "string") texts.push(part.text);
    else if (part.type === "refusal" && typeof part.refusal === "string") refusal = part.refusal;
    else return null;
  }
  const out: { text?: string | string[]; refusal?: string } = {};
  if (texts.length === 1) out.text = texts[0];
  else if (texts.length > 1) out.text = texts;
  if (refusal !== undefined) out.refusal = refusal;
  return out;
}

function canonicalToolCalls(calls: readonly ToolCall[], ids: ToolCallIds): CanonicalToolCall[] {
  return calls.map((call) => ({
    id: ids.assign(call.id),
    type: "function",
    function: { name: call.function.name, arguments: canonicalArguments(call.function.arguments) },
  }));
}

/**
 * Puts one message in canonical form. Null fields, empty content and empty
 * `annotations` are dropped, so what real SDKs echo back keys the same node.
 */
export function canonicalMessage(message: ChatMessage, ids: ToolCallIds, index: number): CanonicalMessage | CanonicalError {
  const out: CanonicalMessage = { role: message.role };
  if (message.content !== null && message.content !== undefined) {
    const text = textContent(message.content as string | Parts);
    if (!text) return { kind: "uncacheable", reason: "non-text content part" };
    if (text.text !== undefined) out.content = text.text;
    if (text.refusal !== undefined) out.refusal = text.refusal;
  }
  if (typeof message.name === "string" && message.name !== "") out.name = message.name;
  if (message.role === "assistant") {
    if (typeof message.refusal === "string") out.refusal = message.refusal;
    if (message.tool_calls && message.tool_calls.length > 0) out.tool_calls = canonicalToolCalls(message.tool_calls, ids);
    if (hasAudio(message)) return { kind: "uncacheable", reason: "audio message" };
  }
  if (message.role === "tool") {
    const ordinal = ids.lookup(message.tool_call_id);
    if (!ordinal) {
      return {
        kind: "invalid",
        message: `messages[${index}].tool_call_id '${message.tool_call_id}' does not answer any earlier tool call`,
        param: `messages[${index}].tool_call_id`,
      };
    }
    out.tool_call_id = ordinal;
  }
  return out;
}

function hasAudio(message: ChatMessage): boolean {
  const audio = (message as { audio?: unknown }).audio;
  return audio !== null && audio !== undefined;
}

/**
 * The form a message is stored in: canonical, except that tool-call arguments
 * keep the text the model first produced (key order included), so a replay
 * serves exactly the recorded arguments. Hashes always use the canonical form.
 */
export function storedForm(canonical: CanonicalMessage, original: ChatMessage): CanonicalMessage {
  if (!canonical.tool_calls || original.role !== "assistant" || !original.tool_calls) return canonical;
  const raw = original.tool_calls;
  if (canonical.tool_calls.every((call, i) => call.function.arguments === raw[i].function.arguments)) return canonical;
  return {
    ...canonical,
    tool_calls: canonical.tool_calls.map((call, i) => ({ ...call, function: { ...call.function, arguments: raw[i].function.arguments } })),
  };
}

/** Canonicalises a whole conversation, numbering tool-call ids in order of appearance. */
export function canonicalConversation(messages: readonly ChatMessage[]): CanonicalResult {
  const ids = new ToolCallIds();
  const out: CanonicalMessage[] = [];
  const stored: CanonicalMessage[] = [];
  for (let i = 0; i < messages.length; i++) {
    const canonical = canonicalMessage(messages[i], ids, i);
    if ("kind" in canonical) return { ok: false, error: canonical };
    out.push(canonical);
    stored.push(storedForm(canonical, messages[i]));
  }
  return { ok: true, messages: out, stored, ids };
}
