import type { ChatBody, ScriptedMessage } from "../../scripted-model";

/**
 * What the API translations (anthropic.ts, responses.ts, gemini.ts) read of the chat requests the evaluation
 * builds (run.ts) and of the scripted model's answers: pure, no I/O, so the unit tests load them in the pool.
 */

/** A chat tool call as the workflows write it. */
export type ChatCall = NonNullable<ScriptedMessage["tool_calls"]>[number];

/** A chat message of the evaluation's requests. */
export type ChatMessage = ChatBody["messages"][number];

/** A chat function tool's parts. */
export interface FunctionTool {
  name: string;
  description?: string;
  parameters?: unknown;
}

/** The function tools of a chat request (`{ type: "function", function: {...} }`), in order. */
export function functionTools(tools: unknown): FunctionTool[] {
  if (!Array.isArray(tools)) return [];
  return tools.map((t) => (t as { function: FunctionTool }).function);
}

/** A chat function tool from its parts (what the workflows send). */
export function chatTool(t: FunctionTool): unknown {
  return { type: "function", function: { name: t.name, ...(t.description === undefined ? {} : { description: t.description }), parameters: t.parameters } };
}

/** The tool calls of a chat message (none when it has none). */
export function callsOf(m: { tool_calls?: unknown }): ChatCall[] {
  return Array.isArray(m.tool_calls) ? (m.tool_calls as ChatCall[]) : [];
}

/** A chat tool call. */
export function chatCall(id: string, name: string, args: unknown): ChatCall {
  return { id, type: "function", function: { name, arguments: JSON.stringify(args ?? {}) } };
}

/** An assistant message: its text (null when none) and its calls (left out when none). */
export function assistant(text: string | null, calls: ChatCall[]): ScriptedMessage {
  return { role: "assistant", content: text, ...(calls.length > 0 ? { tool_calls: calls } : {}) };
}

/** A chat message's content as text (the evaluation's messages carry strings or null). */
export function textOf(content: unknown): string {
  return typeof content === "string" ? content : "";
}

/** A chat reply the way run.ts reads it (`choices[0].message`). */
export function chatCompletion(message: ScriptedMessage): unknown {
  return { choices: [{ index: 0, message, finish_reason: message.tool_calls ? "tool_calls" : "stop" }] };
}
