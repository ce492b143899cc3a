import { z } from "zod";
import { canonicalJson } from "../../core/canonical";
import { fieldsBut, isFields } from "../../core/fields";
import { isJsonText } from "../../core/json-text";
import type { CanonicalMessage, CanonicalToolCall } from "../../core/messages";
import { limitOf, stringsOf, type TemplateView } from "../../cache/templates/view";
import { joinedText } from "./model-turns";
import { CANDIDATE_KEY, type CanonicalPart, type GeminiNode } from "./schema";

/**
 * How a native Gemini content, as a node stores it (src/providers/gemini/canonical.ts, key.ts), reads as a chat
 * message for the templates (src/cache/templates/view.ts). `model` reads as `assistant`, `user` as `user`. In
 * `content`, in order: each text part's text and each `functionResponse.response` as canonical JSON text (the
 * tool's result: the values a model copies). In `tool_calls`: each `functionCall`, its arguments the stored
 * `argsJson` (a recorded answer's args as the model wrote them; a request's as JSON.stringify wrote them), `{}`
 * for a call sent without args, its id `gemini_part_<i>` after its place among the parts. Everything else is in
 * `gemini_parts`, which a template never varies: each part's kind and order, its other fields (`thoughtSignature`,
 * unknown ones), a call's real id and other fields, a response's name, id and other fields, and a thought part
 * (`thought: true`) whole, its text included. A content with anything else has no view. The candidate's metadata
 * stored beside an answer (CANDIDATE_KEY: safety ratings, the streamed layout) is no part of the hash and no part
 * of the view.
 */

/** The field of a view that holds the parts' structure. */
export const GEMINI_PARTS = "gemini_parts";

const fields = z.record(z.string(), z.unknown());
/** One part with its texts and call taken out (`fields`: the part's other fields, kept whole). */
const partShape = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("text"), fields }),
  z.strictObject({ kind: z.literal("thought"), part: fields }),
  z.strictObject({ kind: z.literal("call"), fields, call: fields, args: z.boolean() }),
  z.strictObject({ kind: z.literal("response"), fields, response: fields }),
]);
type PartShape = z.infer<typeof partShape>;

/** A view's fields: no other may be present. */
const VIEW_FIELDS: ReadonlySet<string> = new Set(["role", "content", "tool_calls", GEMINI_PARTS]);

/** What toChat takes out of a part (its text, call or response) and of a call or response (their read fields); the rest is structure. */
const TEXT: ReadonlySet<string> = new Set(["text"]);
const CALL: ReadonlySet<string> = new Set(["functionCall"]);
const CALL_READ: ReadonlySet<string> = new Set(["name", "argsJson"]);
const RESPONSE: ReadonlySet<string> = new Set(["functionResponse"]);
const RESPONSE_READ: ReadonlySet<string> = new Set(["response"]);

/** The view's id of the call at `index` among the parts. */
export const viewCallId = (index: number): string => `gemini_part_${index}`;

/** A thought summary: its text is the model's reasoning, kept whole. */
const isThought = (p: Record<string, unknown>): boolean => p.thought !== undefined && p.thought !== false;

/** The stored content's role and parts, or null when it is not one (CANDIDATE_KEY aside, no other field). */
function storedContent(m: unknown): { role: "user" | "model"; parts: Record<string, unknown>[] } | null {
  if (!isFields(m) || (m.role !== "user" && m.role !== "model") || !Array.isArray(m.parts) || !m.parts.every(isFields)) return null;
  if (Object.keys(m).some((k) => k !== "role" && k !== "parts" && k !== CANDIDATE_KEY)) return null;
  return { role: m.role, parts: m.parts };
}

/** One stored part's texts, call and shape; null for a part a node never stores (the order of canonical.ts's tests). */
function partView(p: Record<string, unknown>, index: number): { texts: string[]; call?: CanonicalToolCall; shape: PartShape } | null {
  if (typeof p.text === "string") {
    if (isThought(p)) return { texts: [], shape: { kind: "thought", part: p } };
    return { texts: [p.text], shape: { kind: "text", fields: fieldsBut(p, TEXT) } };
  }
  if (isFields(p.functionCall)) {
    const { name, argsJson } = p.functionCall;
    if (typeof name !== "string" || "args" in p.functionCall) return null;
    if (argsJson !== undefined && (typeof argsJson !== "string" || !isJsonText(argsJson))) return null;
    const call: CanonicalToolCall = { id: viewCallId(index), type: "function", function: { name, arguments: argsJson ?? "{}" } };
    const shape: PartShape = {
      kind: "call",
      fields: fieldsBut(p, CALL),
      call: fieldsBut(p.functionCall, CALL_READ),
      args: argsJson !== undefined,
    };
    return { texts: [], call, shape };
  }
  if (isFields(p.functionResponse)) {
    if (!("response" in p.functionResponse)) return null;
    const texts = [canonicalJson(p.functionResponse.response)];
    return { texts, shape: { kind: "response", fields: fieldsBut(p, RESPONSE), response: fieldsBut(p.functionResponse, RESPONSE_READ) } };
  }
  return null;
}

function toChat(message: unknown): CanonicalMessage | null {
  const content = storedContent(message);
  if (!content) return null;
  const texts: string[] = [];
  const calls: CanonicalToolCall[] = [];
  const shapes: PartShape[] = [];
  for (let i = 0; i < content.parts.length; i++) {
    const part = partView(content.parts[i], i);
    if (!part) return null;
    texts.push(...part.texts);
    if (part.call) calls.push(part.call);
    shapes.push(part.shape);
  }
  const view: CanonicalMessage = { role: content.role === "model" ? "assistant" : "user", content: texts };
  if (calls.length > 0) view.tool_calls = calls;
  view[GEMINI_PARTS] = shapes;
  return view;
}

/** The call's arguments text as a node stores it (undefined: no `argsJson`), or null when `call` is not the view's call at `index`. */
function storedArgs(call: CanonicalToolCall | undefined, index: number, args: boolean): { argsJson?: string; name: string } | null {
  if (!isFields(call) || Object.keys(call).some((k) => k !== "id" && k !== "type" && k !== "function")) return null;
  if (call.id !== viewCallId(index) || call.type !== "function" || !isFields(call.function)) return null;
  const { name, arguments: text } = call.function;
  if (Object.keys(call.function).some((k) => k !== "name" && k !== "arguments") || typeof name !== "string" || typeof text !== "string") return null;
  if (!args) return text === "{}" ? { name } : null;
  return isJsonText(text) ? { name, argsJson: text } : null;
}

/** A function response's value from its canonical JSON text; null when the text is not one. */
function responseOf(text: string | undefined): { value: unknown } | null {
  if (text === undefined || !isJsonText(text)) return null;
  const value: unknown = JSON.parse(text);
  return canonicalJson(value) === text ? { value } : null;
}

function fromChat(view: CanonicalMessage): unknown {
  if (!isFields(view) || Object.keys(view).some((k) => !VIEW_FIELDS.has(k))) return null;
  if ((view.role !== "user" && view.role !== "assistant") || !Array.isArray(view.content) || !view.content.every((t) => typeof t === "string")) return null;
  const shapes = z.array(partShape).safeParse(view[GEMINI_PARTS]);
  const calls = view.tool_calls ?? [];
  if (!shapes.success || !Array.isArray(calls) || (view.tool_calls !== undefined && calls.length === 0)) return null;
  const texts = view.content;
  let text = 0;
  let call = 0;
  const parts: CanonicalPart[] = [];
  for (let i = 0; i < shapes.data.length; i++) {
    const shape = shapes.data[i];
    if (shape.kind === "thought") {
      parts.push(shape.part as CanonicalPart);
    } else if (shape.kind === "text") {
      if (text >= texts.length) return null;
      parts.push({ ...shape.fields, text: texts[text++] });
    } else if (shape.kind === "call") {
      const args = storedArgs(calls[call++], i, shape.args);
      if (!args || ["name", "args", "argsJson"].some((k) => k in shape.call)) return null;
      parts.push({ ...shape.fields, functionCall: { ...shape.call, ...args } });
    } else {
      const response = responseOf(texts[text++]);
      if (!response || typeof shape.response.name !== "string") return null;
      parts.push({ ...shape.fields, functionResponse: { ...shape.response, name: shape.response.name, response: response.value } });
    }
  }
  if (text !== texts.length || call !== calls.length) return null;
  const node: GeminiNode = { role: view.role === "assistant" ? "model" : "user", parts };
  return node;
}

/** A stored part as it is hashed: a call's `argsJson` parsed into `args` (`{}` without them). */
function hashedPart(p: Record<string, unknown>): CanonicalPart {
  if (typeof p.text === "string" || !isFields(p.functionCall)) return p as CanonicalPart;
  const { argsJson, ...call } = p.functionCall;
  return { ...p, functionCall: { ...call, args: typeof argsJson === "string" ? (JSON.parse(argsJson) as unknown) : {} } } as CanonicalPart;
}

/**
 * The content as key.ts hashes it: empty plain text parts left out, calls' `argsJson` parsed into `args`, a model
 * turn's adjacent plain texts joined (model-turns.ts), CANDIDATE_KEY left out. Anything else comes back as it is.
 */
function hashForm(message: unknown): unknown {
  const content = storedContent(message);
  if (!content) return message;
  const parts = content.parts.filter((p) => !(p.text === "" && Object.keys(p).length === 1)).map(hashedPart);
  const node: GeminiNode = { role: content.role, parts: content.role === "model" ? joinedText(parts) : parts };
  return node;
}

/** A frame's `generationConfig`, under its proto name too (Google reads both, and each field under both names). */
const configsOf = (frame: unknown): Record<string, unknown>[] => (isFields(frame) ? [frame.generationConfig, frame.generation_config].filter(isFields) : []);

/** A frame's stop sequences: `generationConfig.stopSequences`. */
function stopSequences(frame: unknown): string[] {
  return configsOf(frame).flatMap((config) => [...stringsOf(config.stopSequences), ...stringsOf(config.stop_sequences)]);
}

/** A frame's output token limit: `generationConfig.maxOutputTokens` (the smallest, if it names two). */
function tokenLimit(frame: unknown): number | null {
  const limits = configsOf(frame).flatMap((config) => [limitOf(config.maxOutputTokens), limitOf(config.max_output_tokens)]);
  const set = limits.filter((n): n is number => n !== null);
  return set.length > 0 ? Math.min(...set) : null;
}

/**
 * Native Gemini's template view (generateContent, streamGenerateContent). A template never serves an answer the
 * token limit cut (`MAX_TOKENS`), one holding a stop sequence of the request, nor one that might not fit its
 * `maxOutputTokens` (view.ts stopsBefore).
 */
export const geminiTemplateView: TemplateView = {
  api: "gemini",
  toChat,
  fromChat,
  hashForm,
  declares: true,
  cutFinishes: new Set(["MAX_TOKENS"]),
  stopSequences,
  tokenLimit,
};
