import type { StoredAnswer } from "./answer";
import type { CanonicalToolCall } from "./messages";

/** Fresh tool-call ids for a served answer: deterministic per node, unique per call. */
export function servedToolCallId(answerHash: string, index: number): string {
  return `call_mm${answerHash.slice(0, 20)}${index.toString(36)}`;
}

function servedToolCalls(answer: StoredAnswer): Array<CanonicalToolCall> | undefined {
  return answer.message.tool_calls?.map((call, i) => ({
    id: servedToolCallId(answer.hash, i),
    type: "function",
    function: { name: call.function.name, arguments: call.function.arguments },
  }));
}

function contentText(answer: StoredAnswer): string | null {
  const content = answer.message.content;
  if (content === undefined) return null;
  return Array.isArray(content) ? content.join("") : content;
}

export interface RenderContext {
  /** The response id (`chatcmpl-…`). */
  id: string;
  model: string;
  created: number;
}

function usageOf(answer: StoredAnswer) {
  return {
    prompt_tokens: answer.promptTokens,
    completion_tokens: answer.completionTokens,
    total_tokens: answer.promptTokens + answer.completionTokens,
  };
}

/** A `chat.completion` object for a served answer, as the OpenAI API shapes it. */
export function renderCompletion(answer: StoredAnswer, ctx: RenderContext): Record<string, unknown> {
  const toolCalls = servedToolCalls(answer);
  const message: Record<string, unknown> = {
    role: "assistant",
    content: contentText(answer),
    refusal: answer.message.refusal ?? null,
    annotations: [],
  };
  if (answer.message.name) message.name = answer.message.name;
  if (toolCalls) message.tool_calls = toolCalls;
  return {
    id: ctx.id,
    object: "chat.completion",
    created: ctx.created,
    model: ctx.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: answer.finishReason }],
    usage: usageOf(answer),
    system_fingerprint: null,
  };
}

/**
 * The chunks of a streamed answer, as server-sent events ending in `[DONE]`:
 * the role, the content, each tool call (id and name, then arguments), the
 * finish reason, and the usage chunk when `includeUsage` is set.
 */
export function renderChunkStream(answer: StoredAnswer, ctx: RenderContext, includeUsage: boolean): string {
  const base = { id: ctx.id, object: "chat.completion.chunk", created: ctx.created, model: ctx.model, system_fingerprint: null };
  const extra = includeUsage ? { usage: null } : {};
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...extra })}\n\n`;
  let out = chunk({ role: "assistant", content: "", refusal: null });
  const text = contentText(answer);
  if (text) out += chunk({ content: text });
  if (answer.message.refusal) out += chunk({ refusal: answer.message.refusal });
  servedToolCalls(answer)?.forEach((call, index) => {
    out += chunk({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.function.name, arguments: "" } }] });
    out += chunk({ tool_calls: [{ index, function: { arguments: call.function.arguments } }] });
  });
  out += chunk({}, answer.finishReason);
  if (includeUsage) out += `data: ${JSON.stringify({ ...base, choices: [], usage: usageOf(answer) })}\n\n`;
  return `${out}data: [DONE]\n\n`;
}
