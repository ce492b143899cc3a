import type { AnthropicBlock, AnthropicBody, AnthropicReply } from "../../scripted-anthropic";
import type { ChatBody, ScriptedMessage } from "../../scripted-model";
import { assistant, callsOf, chatCall, chatTool, functionTools, textOf, type ChatCall, type ChatMessage } from "./chat-parts";

/**
 * The evaluation on Anthropic Messages (`--api anthropic`): each chat request run.ts builds is written as a
 * `POST /v1/messages` body (system prompt in `system`, tool calls as `tool_use` blocks, the results of one
 * turn as one user message of `tool_result` blocks, tools with `input_schema`), and the answer read back as a
 * chat message. Upstream, the scripted Anthropic model reads the body back as the chat body the workflow's
 * script reads, and writes its chat answer as blocks. Pure: the unit test loads it in the pool.
 */

type Message = AnthropicBody["messages"][number];
type ToolResult = Extract<AnthropicBlock, { type: "tool_result" }>;

/** A chat assistant message as Anthropic content blocks: its text, then its calls (ids as sent). */
function blocksOf(m: { content?: unknown; tool_calls?: unknown }): AnthropicBlock[] {
  const text = textOf(m.content);
  return [
    ...(text === "" ? [] : [{ type: "text" as const, text }]),
    ...callsOf(m).map((c) => ({
      type: "tool_use" as const,
      id: c.id,
      name: c.function.name,
      input: JSON.parse(c.function.arguments) as Record<string, unknown>,
    })),
  ];
}

/** The chat request as a Messages body (the model stays in the body, as Anthropic's clients send it). */
export function anthropicRequest(body: ChatBody): { path: string; body: AnthropicBody } {
  const messages: Message[] = [];
  const system: string[] = [];
  for (const m of body.messages) {
    if (m.role === "system") system.push(textOf(m.content));
    else if (m.role === "user") messages.push({ role: "user", content: textOf(m.content) });
    else if (m.role === "assistant") messages.push({ role: "assistant", content: blocksOf(m) });
    else if (m.role === "tool") {
      const result: ToolResult = { type: "tool_result", tool_use_id: String(m.tool_call_id), content: textOf(m.content) };
      // The results of one turn go back in one user message, as Anthropic asks.
      const last = messages[messages.length - 1];
      if (last?.role === "user" && Array.isArray(last.content) && last.content.every((b) => b.type === "tool_result")) last.content.push(result);
      else messages.push({ role: "user", content: [result] });
    }
  }
  const tools = functionTools(body.tools).map((t) => ({
    name: t.name,
    ...(t.description === undefined ? {} : { description: t.description }),
    input_schema: t.parameters,
  }));
  return {
    path: "/v1/messages",
    body: {
      model: body.model,
      max_tokens: 1024,
      ...(system.length > 0 ? { system: system.join("\n") } : {}),
      messages,
      ...(tools.length > 0 ? { tools } : {}),
    },
  };
}

/** The headers of a Messages request: the chat request's bearer key as `x-api-key`, the rest as they are. */
export function anthropicHeaders(headers: Record<string, string>): Record<string, string> {
  const { authorization, ...rest } = headers;
  const key = authorization?.replace(/^Bearer /, "");
  return { ...rest, ...(key ? { "x-api-key": key } : {}), "anthropic-version": "2023-06-01" };
}

function blockText(b: { type: string; text?: string }): string {
  return b.type === "text" ? (b.text ?? "") : "";
}

/** An answer's blocks as a chat message: its texts joined (null when none), its `tool_use` blocks as calls. */
export function chatOfAnthropicContent(content: ReadonlyArray<{ type: string; text?: string; id?: string; name?: string; input?: unknown }>): ScriptedMessage {
  const text = content.map(blockText).join("");
  const calls: ChatCall[] = content.filter((b) => b.type === "tool_use").map((b) => chatCall(String(b.id), String(b.name), b.input));
  return assistant(text === "" ? null : text, calls);
}

/** A Messages answer (`POST /v1/messages` JSON) as the chat message run.ts compares. */
export function chatOfAnthropicAnswer(json: unknown): ScriptedMessage {
  return chatOfAnthropicContent((json as { content: Array<{ type: string }> }).content);
}

function resultText(block: ToolResult): string {
  if (typeof block.content === "string") return block.content;
  return (block.content ?? []).map((b) => b.text ?? "").join("");
}

function systemText(system: unknown): string | null {
  if (typeof system === "string") return system;
  if (Array.isArray(system)) return system.map((b: { text?: string }) => b.text ?? "").join("\n");
  return null;
}

/** A Messages body as the chat body the workflow's script reads (upstream, in the scripted Anthropic model). */
export function chatOfAnthropicRequest(body: AnthropicBody): ChatBody {
  const messages: ChatMessage[] = [];
  const system = systemText(body.system);
  if (system !== null) messages.push({ role: "system", content: system });
  for (const m of body.messages) {
    const blocks: AnthropicBlock[] = typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
    if (m.role === "assistant") {
      messages.push(chatOfAnthropicContent(blocks));
      continue;
    }
    for (const b of blocks) if (b.type === "tool_result") messages.push({ role: "tool", tool_call_id: b.tool_use_id, content: resultText(b) });
    const text = blocks.map(blockText).join("");
    if (blocks.some((b) => b.type === "text")) messages.push({ role: "user", content: text });
  }
  const tools = (body.tools ?? []).map((t) => {
    const tool = t as { name: string; description?: string; input_schema?: unknown };
    return chatTool({ name: tool.name, description: tool.description, parameters: tool.input_schema });
  });
  return { model: body.model, messages, ...(tools.length > 0 ? { tools } : {}) };
}

/** The scripted model's chat answer as the scripted Anthropic model's reply (its blocks). */
export function anthropicReplyOf(message: ScriptedMessage): AnthropicReply {
  return { content: blocksOf(message) };
}

/** What a Messages answer shows the client, ids aside: its blocks in order (a call's input as its JSON text). */
export function anthropicShape(json: unknown): unknown {
  return (json as { content: Array<Record<string, unknown>> }).content.map((b) =>
    b.type === "tool_use" ? { type: b.type, name: b.name, input: JSON.stringify(b.input) } : b.type === "text" ? { type: b.type, text: b.text } : b,
  );
}

/** The Messages answer the scripted Anthropic model gives for a chat answer (ids aside: anthropicShape drops them). */
export function anthropicAnswerOf(message: ScriptedMessage): unknown {
  return { content: blocksOf(message) };
}
