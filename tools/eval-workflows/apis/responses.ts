import type { ChatBody, ScriptedMessage } from "../../scripted-model";
import type { ResponsesItem, ResponsesModelBody, ResponsesReply } from "../../scripted-responses-model";
import { assistant, callsOf, chatTool, functionTools, textOf, type ChatCall, type ChatMessage } from "./chat-parts";

/**
 * The evaluation on OpenAI Responses (`--api responses`): each chat request run.ts builds is written as a
 * `POST /v1/responses` body (system prompt in `instructions`, the conversation as input items: user messages,
 * an answer's text as an assistant message item and its calls as `function_call` items, each tool result as a
 * `function_call_output`; tools flat, `{ type: "function", name, parameters }`), sent statelessly (`store:
 * false`, no `previous_response_id`), and the answer's output items read back as a chat message. Upstream, the scripted
 * Responses model reads the body back as the chat body the workflow's script reads, and writes its chat
 * answer as output items. Pure: the unit test loads it in the pool.
 */

/** A chat assistant message as input items: its text as a message item, then one `function_call` per call. */
function itemsOf(m: { content?: unknown; tool_calls?: unknown }): ResponsesItem[] {
  const text = textOf(m.content);
  return [
    ...(text === "" ? [] : [{ type: "message", role: "assistant", content: [{ type: "output_text", text, annotations: [] }] }]),
    ...callsOf(m).map((c) => ({ type: "function_call", call_id: c.id, name: c.function.name, arguments: c.function.arguments })),
  ];
}

/** The chat request as a Responses body. */
export function responsesRequest(body: ChatBody): { path: string; body: ResponsesModelBody } {
  const input: ResponsesItem[] = [];
  const system: string[] = [];
  for (const m of body.messages) {
    if (m.role === "system") system.push(textOf(m.content));
    else if (m.role === "user") input.push({ role: "user", content: textOf(m.content) });
    else if (m.role === "assistant") input.push(...itemsOf(m));
    else if (m.role === "tool") input.push({ type: "function_call_output", call_id: String(m.tool_call_id), output: textOf(m.content) });
  }
  const tools = functionTools(body.tools).map((t) => ({
    type: "function",
    name: t.name,
    ...(t.description === undefined ? {} : { description: t.description }),
    parameters: t.parameters,
  }));
  return {
    path: "/v1/responses",
    // Stateless, as Codex sends it: the whole history in `input`, nothing stored to chain on (nothing kept for previous_response_id).
    body: { model: body.model, store: false, ...(system.length > 0 ? { instructions: system.join("\n") } : {}), input, ...(tools.length > 0 ? { tools } : {}) },
  };
}

/** The text of a message item's parts (`output_text`, `input_text` or `text`), joined. */
function partsText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((p: { text?: unknown }) => (typeof p.text === "string" ? p.text : "")).join("");
}

/** A run of assistant items (message and `function_call` items; reasoning aside) as one chat message. */
function chatOfItems(items: ResponsesItem[]): ScriptedMessage {
  const text = items
    .filter((i) => i.type === "message" || (i.type === undefined && i.role === "assistant"))
    .map((i) => partsText(i.content))
    .join("");
  const calls: ChatCall[] = items
    .filter((i) => i.type === "function_call")
    .map((i) => ({ id: String(i.call_id), type: "function", function: { name: String(i.name), arguments: String(i.arguments) } }));
  return assistant(text === "" ? null : text, calls);
}

/** A Responses answer (`POST /v1/responses` JSON) as the chat message run.ts compares. */
export function chatOfResponsesAnswer(json: unknown): ScriptedMessage {
  return chatOfItems((json as { output: ResponsesItem[] }).output);
}

const isAssistantItem = (i: ResponsesItem) => i.type === "function_call" || i.type === "reasoning" || i.role === "assistant";

/** A Responses body as the chat body the workflow's script reads (upstream, in the scripted Responses model). */
export function chatOfResponsesRequest(body: ResponsesModelBody): ChatBody {
  const messages: ChatMessage[] = [];
  if (typeof body.instructions === "string") messages.push({ role: "system", content: body.instructions });
  const items: ResponsesItem[] = typeof body.input === "string" ? [{ role: "user", content: body.input }] : body.input;
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (isAssistantItem(item)) {
      // Consecutive assistant items are one chat turn.
      let end = i;
      while (end + 1 < items.length && isAssistantItem(items[end + 1])) end++;
      messages.push(chatOfItems(items.slice(i, end + 1)));
      i = end;
    } else if (item.type === "function_call_output") messages.push({ role: "tool", tool_call_id: String(item.call_id), content: String(item.output) });
    else messages.push({ role: String(item.role ?? "user"), content: partsText(item.content) });
  }
  const tools = (body.tools ?? []).map((t) => {
    const tool = t as { name: string; description?: string; parameters?: unknown };
    return chatTool({ name: tool.name, description: tool.description, parameters: tool.parameters });
  });
  return { model: body.model, messages, ...(tools.length > 0 ? { tools } : {}) };
}

/** The scripted model's chat answer as the scripted Responses model's reply (its text, then its calls). */
export function responsesReplyOf(message: ScriptedMessage): ResponsesReply {
  const text = textOf(message.content);
  return {
    output: [
      ...(text === "" ? [] : [{ text }]),
      ...callsOf(message).map((c) => ({ call: c.function.name, args: JSON.parse(c.function.arguments) as Record<string, unknown> })),
    ],
  };
}

/** What a Responses answer shows the client, ids and statuses aside: its output items in order. */
export function responsesShape(json: unknown): unknown {
  return (json as { output: ResponsesItem[] }).output.map((i) =>
    i.type === "function_call"
      ? { type: i.type, name: i.name, arguments: i.arguments }
      : i.type === "message"
        ? { type: i.type, role: i.role, content: (i.content as Array<{ type: string; text?: string }>).map((p) => ({ type: p.type, text: p.text })) }
        : { type: i.type },
  );
}

/** The Responses answer the scripted Responses model gives for a chat answer (its output items; ids aside). */
export function responsesAnswerOf(message: ScriptedMessage): unknown {
  const text = textOf(message.content);
  return {
    output: [
      ...(text === "" ? [] : [{ type: "message", role: "assistant", content: [{ type: "output_text", text }] }]),
      ...callsOf(message).map((c) => ({ type: "function_call", name: c.function.name, arguments: c.function.arguments })),
    ],
  };
}
