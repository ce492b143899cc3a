import { limitOf, stringsOf, type TemplateView } from "../../cache/templates/view";
import { canonicalJson } from "../../core/canonical";
import { fieldsBut, isFields } from "../../core/fields";
import type { CanonicalMessage, CanonicalToolCall } from "../../core/messages";
import { canonicalAnthropicMessage, isAnthropicError, ToolUseIds } from "./canonical";
import { ANTHROPIC_ENVELOPE_KEYS } from "./envelope";
import { KEYED_ROLES, type AnthropicCanonicalMessage, type AnthropicMessage } from "./schema";

/** The view's field holding every block in order, its texts and call taken out (structure only). */
export const BLOCKS_FIELD = "anthropic_blocks";
/** The view's field holding the message's fields besides `role` and `content` (absent when there are none). */
export const MESSAGE_FIELD = "anthropic_message";

type Fields = Record<string, unknown>;

const ROLES: ReadonlySet<string> = new Set(KEYED_ROLES);
const VIEW_FIELDS: ReadonlySet<string> = new Set(["role", "content", "tool_calls", BLOCKS_FIELD, MESSAGE_FIELD]);
/** What a structural block never holds: the fields the view takes out of it (they would be ambiguous there). */
const TAKEN_OUT: Record<string, readonly string[]> = { text: ["text"], tool_use: ["id", "name", "input", "input_json"] };

/** Thrown inside the view when a message or a view is not one of the shapes it reads; caught at its surface. */
class NotAView extends Error {}

function fail(why: string): never {
  throw new NotAView(why);
}

/** The message's own fields besides role and content; an assistant's envelope keys are no part of it. */
function messageFields(message: Fields): Fields {
  const skip = new Set(["role", "content", ...(message.role === "assistant" ? ANTHROPIC_ENVELOPE_KEYS : [])]);
  return fieldsBut(message, skip);
}

/** A tool call's arguments: the input as the model wrote it when the block keeps that text, else the input's canonical JSON. */
function argumentsOf(block: Fields): string {
  if (!("input" in block)) fail("a tool_use without its input");
  if (block.input_json === undefined) return canonicalJson(block.input);
  if (typeof block.input_json !== "string" || canonicalJson(JSON.parse(block.input_json)) !== canonicalJson(block.input)) fail("input_json is not the input");
  return block.input_json;
}

/** One stored block as the view keeps it (structure only); its texts and call go to `texts` and `calls`. */
function shapeOf(block: unknown, texts: string[], calls: CanonicalToolCall[]): Fields {
  if (!isFields(block)) fail("a block that is no object");
  switch (block.type) {
    case "text": {
      const { text, ...rest } = block;
      if (typeof text !== "string") fail("a text block without its text");
      texts.push(text);
      return rest;
    }
    case "tool_use": {
      const { id, name, input: _input, input_json: _text, ...rest } = block;
      if (typeof id !== "string" || typeof name !== "string") fail("a tool_use without its id and name");
      calls.push({ id, type: "function", function: { name, arguments: argumentsOf(block) } });
      return rest;
    }
    case "tool_result": {
      if (!Array.isArray(block.content)) fail("a tool_result whose content is no list of blocks");
      const content = block.content.map((inner: unknown) => {
        if (!isFields(inner) || inner.type !== "text") fail("a tool_result block that is not text");
        return shapeOf(inner, texts, calls);
      });
      return { ...block, content };
    }
    case "thinking":
    case "redacted_thinking":
      return { ...block };
    default:
      return fail("a block of a type no node stores");
  }
}

function toChat(message: unknown): CanonicalMessage | null {
  try {
    if (!isFields(message) || typeof message.role !== "string" || !ROLES.has(message.role) || !Array.isArray(message.content)) return null;
    const texts: string[] = [];
    const calls: CanonicalToolCall[] = [];
    const blocks = message.content.map((block: unknown) => shapeOf(block, texts, calls));
    const fields = messageFields(message);
    return {
      role: message.role,
      content: texts,
      ...(calls.length > 0 ? { tool_calls: calls } : {}),
      [BLOCKS_FIELD]: blocks,
      ...(Object.keys(fields).length > 0 ? { [MESSAGE_FIELD]: fields } : {}),
    };
  } catch {
    return null;
  }
}

/** Hands out a view's texts and calls in order, and says whether all were used. */
class Reader<T> {
  private next = 0;
  constructor(private readonly items: readonly T[]) {}
  take(): T {
    if (this.next >= this.items.length) fail("fewer texts or calls than the blocks hold");
    return this.items[this.next++];
  }
  done(): boolean {
    return this.next === this.items.length;
  }
}

/** The call's name and arguments, when it holds nothing else (a field the block could not carry back would be lost). */
function callOf(call: unknown): { id: string; name: string; text: string } {
  if (!isFields(call) || Object.keys(call).some((k) => k !== "id" && k !== "type" && k !== "function") || call.type !== "function") fail("not a call");
  const fn = call.function;
  if (!isFields(fn) || Object.keys(fn).some((k) => k !== "name" && k !== "arguments")) fail("not a call's function");
  if (typeof call.id !== "string" || typeof fn.name !== "string" || typeof fn.arguments !== "string") fail("a call without its id, name or arguments");
  return { id: call.id, name: fn.name, text: fn.arguments };
}

/** A structural block, checked to hold none of what the view takes out of it. */
function structural(shape: unknown): Fields {
  if (!isFields(shape) || typeof shape.type !== "string") fail("a structural block that is no block");
  if ((TAKEN_OUT[shape.type] ?? []).some((k) => k in shape)) fail("a structural block holding what the view takes out");
  return shape;
}

/** A stored block from its structural form and the view's next texts and calls. */
function blockOf(shape: unknown, texts: Reader<unknown>, calls: Reader<unknown>): Fields {
  const block = structural(shape);
  switch (block.type) {
    case "text": {
      const text = texts.take();
      if (typeof text !== "string") fail("a text that is no string");
      return { ...block, text };
    }
    case "tool_use": {
      const call = callOf(calls.take());
      // The input as the model wrote it (input_json), served as is (render.ts), and its value.
      return { ...block, id: call.id, name: call.name, input: JSON.parse(call.text) as unknown, input_json: call.text };
    }
    case "tool_result": {
      if (!Array.isArray(block.content)) fail("a tool_result whose content is no list");
      const content = block.content.map((inner: unknown) => {
        if (structural(inner).type !== "text") fail("a tool_result block that is not text");
        return blockOf(inner, texts, calls);
      });
      return { ...block, content };
    }
    case "thinking":
    case "redacted_thinking":
      return block;
    default:
      return fail("a block of a type no node stores");
  }
}

function fromChat(view: CanonicalMessage): unknown {
  try {
    if (Object.keys(view).some((k) => !VIEW_FIELDS.has(k)) || !ROLES.has(view.role)) return null;
    const { content, tool_calls: calls } = view;
    const blocks = view[BLOCKS_FIELD];
    const fields = view[MESSAGE_FIELD];
    if (!Array.isArray(content) || !Array.isArray(blocks)) return null;
    // What toChat never writes (no calls as an empty list, no fields as an empty object) is no view: one view per message.
    if (calls !== undefined && (!Array.isArray(calls) || calls.length === 0)) return null;
    if (fields !== undefined && (!isFields(fields) || Object.keys(fields).length === 0)) return null;
    if (fields !== undefined && Object.keys(messageFields({ ...fields, role: view.role })).length !== Object.keys(fields).length) return null;
    const texts = new Reader<unknown>(content);
    const uses = new Reader<unknown>(calls ?? []);
    const out = blocks.map((shape: unknown) => blockOf(shape, texts, uses));
    if (!texts.done() || !uses.done()) return null;
    return { ...fields, role: view.role, content: out };
  } catch {
    return null;
  }
}

/** Tool ids as stored (ordinals already): the hash form keeps them as they are. */
class StoredIds extends ToolUseIds {
  override assign(id: string): string {
    return id;
  }
  override lookup(id: string): string {
    return id;
  }
}

/**
 * What the answer node's hash reads (key.ts keyAnthropicAnswer): the canonical message without the kept input
 * texts (`input_json`), a `caller: {type: "direct"}`, empty text blocks, null fields or an answer's envelope.
 * Throws for a message no node of this API stores (view.ts compares hash forms inside a try).
 */
function hashForm(message: unknown): AnthropicCanonicalMessage {
  if (!isFields(message) || typeof message.role !== "string" || !Array.isArray(message.content)) fail("not an Anthropic message as stored");
  const content = message.content.map((block: unknown) => (isFields(block) && block.type === "tool_use" ? fieldsBut(block, new Set(["input_json"])) : block));
  const bare = { ...messageFields(message), role: message.role, content } as AnthropicMessage;
  const canonical = canonicalAnthropicMessage(bare, new StoredIds(), 0);
  if (isAnthropicError(canonical)) fail(canonical.kind === "invalid" ? canonical.message : canonical.reason);
  return canonical;
}

/**
 * How an Anthropic message, as stored on a node, reads as chat's canonical message (cache/templates/view.ts),
 * one for one: same role (`user`, `assistant`, `system`); `content` the texts the model reads or writes, in
 * block order (a text block's text, each text of a `tool_result`), always a list; `tool_calls` the `tool_use`
 * blocks (id, name, and as arguments the input as the model wrote it, `input_json`, where the answer keeps it,
 * else its canonical JSON). Everything else stays whole in two structural fields, which a template never
 * varies: BLOCKS_FIELD, every block in order with its texts, id, name and input taken out (its type, `is_error`,
 * `tool_use_id`, `caller`, a `citations: null`, any other field; a thinking or redacted thinking block whole,
 * signature and all), and MESSAGE_FIELD, the message's fields besides `role` and `content`, when it has any.
 *
 * An answer's envelope (./envelope.ts: what the model sent around the message) is no part of the view. A template
 * never serves an answer `max_tokens` cut, one holding a `stop_sequences` entry of the request, nor one that might
 * not fit its `max_tokens` (view.ts stopsBefore).
 *
 * @example
 * anthropicTemplateView.toChat({ role: "assistant", content: [{ type: "text", text: "On it." }, { type: "tool_use", id: "toolu_1", name: "get_order", input: { id: "A-1" } }] })
 * // => { role: "assistant", content: ["On it."], tool_calls: [{ id: "toolu_1", type: "function", function: { name: "get_order", arguments: '{"id":"A-1"}' } }],
 * //      anthropic_blocks: [{ type: "text" }, { type: "tool_use" }] }
 */
export const anthropicTemplateView: TemplateView = {
  api: "anthropic",
  toChat,
  fromChat,
  hashForm,
  declares: true,
  // An answer `max_tokens` cut (./stop.ts records it) stops elsewhere with values of another length.
  cutFinishes: new Set(["max_tokens"]),
  stopSequences: (frame) => (isFields(frame) ? stringsOf(frame.stop_sequences) : []),
  tokenLimit: (frame) => (isFields(frame) ? limitOf(frame.max_tokens) : null),
};
