import type { GeminiModelBody, GeminiPart, GeminiReply } from "../../scripted-gemini-model";
import type { ChatBody, ScriptedMessage } from "../../scripted-model";
import { freshCallId } from "../types";
import { assistant, callsOf, chatCall, chatTool, functionTools, textOf, type ChatMessage } from "./chat-parts";

/**
 * The evaluation on native Gemini (`--api gemini`): each chat request run.ts builds is written as a
 * `POST /v1beta/models/{model}:generateContent` body (system prompt in `systemInstruction`, the answer's turns
 * as `model` contents with `functionCall` parts, the results of one turn as one `user` content of
 * `functionResponse` parts, tools as one `functionDeclarations` list), and the answer's parts read back as a
 * chat message. Gemini's calls carry no id (the scripted model's do not, as Gemini's usually do not): a
 * result names its call's function, and the chat side numbers the calls itself. Upstream, the scripted
 * Gemini model reads the body back as the chat body the workflow's script reads (a result answers the
 * earliest unanswered call of its name), and writes its chat answer as parts. Pure: the unit test loads it.
 */

type Content = GeminiModelBody["contents"][number];

/** A tool result's `response`: the workflows' results are JSON objects (anything else is wrapped as `{ output }`). */
function responseOf(content: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(content);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : { output: value };
  } catch {
    return { output: content };
  }
}

/** A chat assistant message as a `model` content's parts: its text, then its calls (no ids). */
function partsOf(m: { content?: unknown; tool_calls?: unknown }): GeminiPart[] {
  const text = textOf(m.content);
  return [
    ...(text === "" ? [] : [{ text }]),
    ...callsOf(m).map((c) => ({ functionCall: { name: c.function.name, args: JSON.parse(c.function.arguments) as Record<string, unknown> } })),
  ];
}

/** The chat request as a generateContent body and its path (the model is in the path). */
export function geminiRequest(body: ChatBody): { path: string; body: GeminiModelBody } {
  const contents: Content[] = [];
  const system: string[] = [];
  const names = new Map<string, string>();
  for (const m of body.messages) {
    if (m.role === "system") system.push(textOf(m.content));
    else if (m.role === "user") contents.push({ role: "user", parts: [{ text: textOf(m.content) }] });
    else if (m.role === "assistant") {
      for (const c of callsOf(m)) names.set(c.id, c.function.name);
      contents.push({ role: "model", parts: partsOf(m) });
    } else if (m.role === "tool") {
      const part: GeminiPart = { functionResponse: { name: names.get(String(m.tool_call_id)) ?? "", response: responseOf(textOf(m.content)) } };
      // The results of one turn go back in one user content.
      const last = contents[contents.length - 1];
      if (last?.role === "user" && last.parts.every((p) => p.functionResponse)) last.parts.push(part);
      else contents.push({ role: "user", parts: [part] });
    }
  }
  const declarations = functionTools(body.tools).map((t) => ({
    name: t.name,
    ...(t.description === undefined ? {} : { description: t.description }),
    parameters: t.parameters,
  }));
  return {
    path: `/v1beta/models/${encodeURIComponent(body.model)}:generateContent`,
    body: {
      ...(system.length > 0 ? { systemInstruction: { parts: [{ text: system.join("\n") }] } } : {}),
      contents,
      ...(declarations.length > 0 ? { tools: [{ functionDeclarations: declarations }] } : {}),
    },
  };
}

/** The headers of a Gemini request: the chat request's bearer key as `x-goog-api-key`, the rest as they are. */
export function geminiHeaders(headers: Record<string, string>): Record<string, string> {
  const { authorization, ...rest } = headers;
  const key = authorization?.replace(/^Bearer /, "");
  return { ...rest, ...(key ? { "x-goog-api-key": key } : {}) };
}

/** A `model` content's parts as a chat message: texts joined (null when none), calls with `id` (their own, else a fresh one). */
function chatOfParts(parts: GeminiPart[], id: () => string): ScriptedMessage {
  const text = parts.map((p) => (typeof p.text === "string" ? p.text : "")).join("");
  const calls = parts.filter((p) => p.functionCall).map((p) => chatCall(p.functionCall?.id ?? id(), String(p.functionCall?.name), p.functionCall?.args ?? {}));
  return assistant(text === "" ? null : text, calls);
}

/** A generateContent answer as the chat message run.ts compares (calls get fresh ids, as a model's would). */
export function chatOfGeminiAnswer(json: unknown): ScriptedMessage {
  const parts = (json as { candidates: Array<{ content: { parts?: GeminiPart[] } }> }).candidates[0].content.parts ?? [];
  return chatOfParts(parts, freshCallId);
}

/** A generateContent body as the chat body the workflow's script reads (upstream: `model` from the path). */
export function chatOfGeminiRequest(body: GeminiModelBody, model: string): ChatBody {
  const messages: ChatMessage[] = [];
  const system = body.systemInstruction as { parts?: Array<{ text?: string }> } | undefined;
  if (system?.parts) messages.push({ role: "system", content: system.parts.map((p) => p.text ?? "").join("") });
  let n = 0;
  // Calls not yet answered, by function name, oldest first.
  const open = new Map<string, string[]>();
  for (const c of body.contents) {
    if (c.role === "model") {
      const message = chatOfParts(c.parts, () => `gcall_${n++}`);
      for (const call of callsOf(message)) open.set(call.function.name, [...(open.get(call.function.name) ?? []), call.id]);
      messages.push(message);
      continue;
    }
    for (const p of c.parts) {
      if (!p.functionResponse) continue;
      const queue = open.get(p.functionResponse.name) ?? [];
      const id = p.functionResponse.id ?? queue.shift() ?? `gcall_${n++}`;
      messages.push({ role: "tool", tool_call_id: id, content: JSON.stringify(p.functionResponse.response ?? {}) });
    }
    if (c.parts.some((p) => typeof p.text === "string")) messages.push({ role: "user", content: c.parts.map((p) => p.text ?? "").join("") });
  }
  const tools = (body.tools ?? []).flatMap(
    (t) => (t as { functionDeclarations?: Array<{ name: string; description?: string; parameters?: unknown }> }).functionDeclarations ?? [],
  );
  return { model, messages, ...(tools.length > 0 ? { tools: tools.map((t) => chatTool(t)) } : {}) };
}

/** The scripted model's chat answer as the scripted Gemini model's reply (its parts, no call ids). */
export function geminiReplyOf(message: ScriptedMessage): GeminiReply {
  return { parts: partsOf(message) };
}

/** What a generateContent answer shows the client, ids aside: its parts in order (a call's args as JSON text). */
export function geminiShape(json: unknown): unknown {
  const parts = (json as { candidates: Array<{ content: { parts?: GeminiPart[] } }> }).candidates[0].content.parts ?? [];
  return parts.map((p) => (p.functionCall ? { functionCall: { name: p.functionCall.name, args: JSON.stringify(p.functionCall.args ?? {}) } } : p));
}

/** The generateContent answer the scripted Gemini model gives for a chat answer. */
export function geminiAnswerOf(message: ScriptedMessage): unknown {
  return { candidates: [{ content: { role: "model", parts: partsOf(message) } }] };
}
