import { z } from "zod";
import { canonicalArguments } from "../../core/canonical";
import { fieldsBut, isFields } from "../../core/fields";
import type { CanonicalMessage, CanonicalToolCall } from "../../core/messages";
import { limitOf, withoutEnvelope, type TemplateView } from "../../cache/templates/view";

/**
 * How a Responses node (./canonical.ts: what one path step or answer node stores) reads as one chat message for
 * the templates (src/cache/templates/view.ts), and back:
 * - a user, system or developer message: that role, its text parts' texts in `content`;
 * - a function (or custom tool) call's output (`role: "tool"`): a `tool` message, `tool_call_id` the call's
 *   ordinal, its output text (or its parts' texts) in `content`;
 * - tools added mid-conversation (`role: "tools"`, Codex's `additional_tools`): a `system` message with no text;
 * - a run of output items (`role: "assistant"`: an echoed run on the path, or the answer node): one `assistant`
 *   message whose `content` lists, in item order, each message part's text or refusal and each custom tool
 *   call's input, and whose `tool_calls` are its function calls (`call_id` as `id`, `arguments` as stored: as
 *   the model wrote them on an answer node).
 * Everything else (which node it is, each item's type, order and other fields, a reasoning item whole, whether
 * an output was a string or parts, any other field of the node) is in STRUCTURE, which a template never varies.
 * An answer's envelope (`muscle-mem:response`, ./envelope.ts) is no part of a view (chatViewOf takes it off first;
 * toChat leaves it out too) and outside the hash form. Pure; never throws.
 */
export const STRUCTURE = "responses_node";

type Fields = Record<string, unknown>;

const textPart = z.strictObject({ type: z.literal("text"), text: z.string() });
const refusalPart = z.strictObject({ type: z.literal("refusal"), refusal: z.string() });
const messageContent = z.array(z.union([textPart, refusalPart]));
const callView = z.strictObject({
  id: z.string(),
  type: z.literal("function"),
  function: z.strictObject({ name: z.string(), arguments: z.string() }),
});
/** What STRUCTURE holds: the node's kind and every field that is not a text or a call. */
const structure = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("message"), fields: z.record(z.string(), z.unknown()) }),
  z.strictObject({ kind: z.literal("tool"), output: z.enum(["text", "parts"]), fields: z.record(z.string(), z.unknown()) }),
  z.strictObject({ kind: z.literal("tools"), fields: z.record(z.string(), z.unknown()) }),
  z.strictObject({ kind: z.literal("output"), items: z.array(z.looseObject({ type: z.string() })), fields: z.record(z.string(), z.unknown()) }),
]);
type Structure = z.infer<typeof structure>;
type ItemSkeleton = Extract<Structure, { kind: "output" }>["items"][number];

/** What the view reads of a call, a custom call, a message, a call's output, the tools node and a run of output items; the rest is structure. */
const CALL_READ: ReadonlySet<string> = new Set(["call_id", "name", "arguments"]);
const CUSTOM_READ: ReadonlySet<string> = new Set(["input"]);
const MESSAGE_READ: ReadonlySet<string> = new Set(["role", "content"]);
const OUTPUT_READ: ReadonlySet<string> = new Set(["role", "call_id", "output"]);
const ROLE_READ: ReadonlySet<string> = new Set(["role"]);
const RUN_READ: ReadonlySet<string> = new Set(["role", "items"]);
const MESSAGE_ROLES: ReadonlySet<string> = new Set(["user", "system", "developer"]);
/** A view's own top-level fields, per kind. */
const VIEW_FIELDS: Readonly<Record<Structure["kind"], ReadonlySet<string>>> = {
  message: new Set(["role", "content", STRUCTURE]),
  tool: new Set(["role", "content", "tool_call_id", STRUCTURE]),
  tools: new Set(["role", "content", STRUCTURE]),
  output: new Set(["role", "content", "tool_calls", STRUCTURE]),
};

/** An output item's texts and calls taken out, or null when it is no item a Responses node stores. */
function splitItem(item: unknown, texts: string[], calls: CanonicalToolCall[]): ItemSkeleton | null {
  if (!isFields(item)) return null;
  if (item.type === "reasoning") return { ...item, type: "reasoning" };
  if (item.type === "function_call") {
    const { call_id: id, name, arguments: args } = item;
    if (typeof id !== "string" || typeof name !== "string" || typeof args !== "string") return null;
    calls.push({ id, type: "function", function: { name, arguments: args } });
    return { ...fieldsBut(item, CALL_READ), type: "function_call" };
  }
  if (item.type === "custom_tool_call") {
    if (typeof item.input !== "string" || typeof item.call_id !== "string" || typeof item.name !== "string") return null;
    texts.push(item.input);
    return { ...fieldsBut(item, CUSTOM_READ), type: "custom_tool_call" };
  }
  if (item.type !== "message") return null;
  const content = messageContent.safeParse(item.content);
  if (!content.success) return null;
  for (const part of content.data) texts.push(part.type === "text" ? part.text : part.refusal);
  return { ...item, type: "message", content: content.data.map((part) => part.type) };
}

function toChat(stored: unknown): CanonicalMessage | null {
  const message = withoutEnvelope(stored);
  if (!isFields(message) || typeof message.role !== "string") return null;
  const { role } = message;
  if (MESSAGE_ROLES.has(role)) {
    const content = z.array(textPart).safeParse(message.content);
    if (!content.success) return null;
    const shape: Structure = { kind: "message", fields: fieldsBut(message, MESSAGE_READ) };
    return { role, content: content.data.map((p) => p.text), [STRUCTURE]: shape };
  }
  if (role === "tool") {
    const { call_id: id, output } = message;
    const texts = typeof output === "string" ? [output] : z.array(z.string()).safeParse(output).data;
    if (typeof id !== "string" || !texts) return null;
    const shape: Structure = {
      kind: "tool",
      output: typeof output === "string" ? "text" : "parts",
      fields: fieldsBut(message, OUTPUT_READ),
    };
    return { role: "tool", tool_call_id: id, content: texts, [STRUCTURE]: shape };
  }
  if (role === "tools") {
    if (!Array.isArray(message.tools)) return null;
    return { role: "system", content: [], [STRUCTURE]: { kind: "tools", fields: fieldsBut(message, ROLE_READ) } };
  }
  if (role !== "assistant" || !Array.isArray(message.items)) return null;
  const texts: string[] = [];
  const calls: CanonicalToolCall[] = [];
  const items: ItemSkeleton[] = [];
  for (const item of message.items) {
    const skeleton = splitItem(item, texts, calls);
    if (!skeleton) return null;
    items.push(skeleton);
  }
  const shape: Structure = { kind: "output", items, fields: fieldsBut(message, RUN_READ) };
  return { role: "assistant", content: texts, ...(calls.length > 0 ? { tool_calls: calls } : {}), [STRUCTURE]: shape };
}

/** Reads a view's texts and calls in order, as the items that held them are rebuilt. */
class Cursor {
  private text = 0;
  private call = 0;
  constructor(
    private readonly texts: readonly string[],
    private readonly calls: readonly z.infer<typeof callView>[],
  ) {}
  nextText(): string | null {
    return this.text < this.texts.length ? this.texts[this.text++] : null;
  }
  nextCall(): z.infer<typeof callView> | null {
    return this.call < this.calls.length ? this.calls[this.call++] : null;
  }
  done(): boolean {
    return this.text === this.texts.length && this.call === this.calls.length;
  }
}

/** An output item rebuilt from its skeleton, or null when the view's texts or calls do not fit it. */
function joinItem(skeleton: ItemSkeleton, cursor: Cursor): Fields | null {
  if (skeleton.type === "reasoning") return { ...skeleton };
  if (skeleton.type === "function_call") {
    const call = cursor.nextCall();
    if (!call) return null;
    return { ...skeleton, call_id: call.id, name: call.function.name, arguments: call.function.arguments };
  }
  if (skeleton.type === "custom_tool_call") {
    const input = cursor.nextText();
    return input === null ? null : { ...skeleton, input };
  }
  if (skeleton.type !== "message") return null;
  const kinds = z.array(z.enum(["text", "refusal"])).safeParse(skeleton.content);
  if (!kinds.success) return null;
  const content: Fields[] = [];
  for (const kind of kinds.data) {
    const text = cursor.nextText();
    if (text === null) return null;
    content.push(kind === "text" ? { type: "text", text } : { type: "refusal", refusal: text });
  }
  return { ...skeleton, content };
}

function fromChat(view: CanonicalMessage): unknown {
  const parsed = structure.safeParse(view[STRUCTURE]);
  const texts = z.array(z.string()).safeParse(view.content);
  if (!parsed.success || !texts.success) return null;
  const shape = parsed.data;
  const allowed = VIEW_FIELDS[shape.kind];
  if (Object.keys(view).some((k) => !allowed.has(k))) return null;
  const content = texts.data;
  switch (shape.kind) {
    case "message":
      return MESSAGE_ROLES.has(view.role) ? { ...shape.fields, role: view.role, content: content.map((text) => ({ type: "text", text })) } : null;
    case "tool": {
      if (view.role !== "tool" || typeof view.tool_call_id !== "string") return null;
      if (shape.output === "text" && content.length !== 1) return null;
      return { ...shape.fields, role: "tool", call_id: view.tool_call_id, output: shape.output === "text" ? content[0] : content };
    }
    case "tools":
      return view.role === "system" && content.length === 0 ? { ...shape.fields, role: "tools" } : null;
    case "output": {
      const calls = z.array(callView).safeParse(view.tool_calls ?? []);
      if (view.role !== "assistant" || !calls.success) return null;
      const cursor = new Cursor(content, calls.data);
      const items: Fields[] = [];
      for (const skeleton of shape.items) {
        const item = joinItem(skeleton, cursor);
        if (!item) return null;
        items.push(item);
      }
      return cursor.done() ? { ...shape.fields, role: "assistant", items } : null;
    }
  }
}

/** An output item as the answer node's hash reads it (./canonical.ts outputItem): see hashForm. */
function hashedItem(item: unknown): unknown {
  if (!isFields(item)) return item;
  if (item.type === "reasoning") {
    const out: Fields = {};
    for (const [k, v] of Object.entries(item)) if (k !== "status" && v !== null && v !== undefined) out[k] = v;
    return out;
  }
  if (item.type === "function_call" && typeof item.arguments === "string") return { ...item, arguments: canonicalArguments(item.arguments) };
  if (item.type === "message" && Array.isArray(item.content)) {
    return { ...item, content: item.content.filter((p) => !(isFields(p) && p.type === "text" && p.text === "")) };
  }
  return item;
}

/**
 * A stored node as its hash reads it: no envelope; in a run of output items, a function call's arguments as
 * canonical JSON, a message without its empty text parts (kept only in an answer's stored form), a reasoning
 * item without its `status` and null fields. Every other node is hashed as stored.
 */
function hashForm(message: unknown): unknown {
  if (!isFields(message)) return message;
  const out = { ...(withoutEnvelope(message) as Fields) };
  if (out.role === "assistant" && Array.isArray(out.items)) out.items = out.items.map(hashedItem);
  return out;
}

/**
 * The OpenAI Responses API's template view (src/cache/templates/view.ts). The API has no stop sequences, and an
 * answer the token limit cut (`incomplete`) is never recorded (./adapter.ts): no finish reason is a cut; a
 * template's answer that might not fit `max_output_tokens` is not served (view.ts stopsBefore).
 */
export const responsesTemplateView: TemplateView = {
  api: "openai-responses",
  toChat,
  fromChat,
  hashForm,
  // A served id resolves through previous_response_id to the stored messages: a declared tree's hold placeholders.
  declares: false,
  cutFinishes: new Set(),
  stopSequences: () => [],
  tokenLimit: (frame) => (isFields(frame) ? limitOf(frame.max_output_tokens) : null),
};
