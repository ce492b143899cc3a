import type { CanonicalMessage } from "../../core/messages";

/** An OpenAI chat message rebuilt from a stored canonical message. */
export interface OpenAIMessage {
  role: string;
  content: string | null | Array<{ type: "text"; text: string }>;
  name?: string;
  refusal?: string | null;
  tool_calls?: CanonicalMessage["tool_calls"];
  tool_call_id?: string;
  /** Every other field as stored (`function_call`, `prefix`, …): it was keyed, so it must come back. */
  [field: string]: unknown;
}

/**
 * A stored canonical chat message as the OpenAI API writes it: tool-call ids stay ordinals (`call_0`, …),
 * which are valid ids and key the same nodes when the list is sent again or imported.
 */
export function openAIMessageOf(message: CanonicalMessage): OpenAIMessage {
  const out: OpenAIMessage = { role: message.role, content: null };
  if (typeof message.content === "string") out.content = message.content;
  else if (Array.isArray(message.content)) out.content = message.content.map((text) => ({ type: "text", text }));
  else if (message.role !== "assistant") out.content = "";
  if (message.name !== undefined) out.name = message.name;
  if (message.refusal !== undefined) out.refusal = message.refusal;
  if (message.tool_calls) out.tool_calls = message.tool_calls;
  if (message.tool_call_id !== undefined) out.tool_call_id = message.tool_call_id;
  for (const [k, v] of Object.entries(message)) if (!(k in out) && k !== "content") out[k] = v;
  return out;
}

/** A stored node (canonical JSON) of a chat tree, as the node API and the export show it. */
export function chatNodeMessage(json: string): OpenAIMessage {
  return openAIMessageOf(JSON.parse(json) as CanonicalMessage);
}
