import type { StoredAnswer } from "../../core/answer";
import { CONTENT_FILTERS, ENVELOPE_KEYS, envelopeOf, PROMPT_FILTERS } from "../../core/envelope";
import type { CanonicalToolCall } from "../../core/messages";

/** Fresh tool-call ids for a served answer: deterministic per node, unique per call. */
export function servedToolCallId(answerHash: string, index: number): string {
  return `call_mm${answerHash.slice(0, 20)}${index.toString(36)}`;
}

/**
 * A function object in the order the API writes it (`name`, `arguments`, then
 * anything else recorded): stored messages are canonical JSON, whose keys are
 * sorted, and a replay must read like the model's answer.
 */
function inApiOrder<F extends { name: string; arguments: string }>(fn: F): F {
  const { name, arguments: args, ...rest } = fn;
  return { name, arguments: args, ...rest } as unknown as F;
}

function servedToolCalls(answer: StoredAnswer): Array<CanonicalToolCall> | undefined {
  return answer.message.tool_calls?.map((call, i) => ({
    id: servedToolCallId(answer.hash, i),
    type: "function",
    function: inApiOrder(call.function),
    ...extrasOf(call),
  }));
}

/** A recorded tool call's fields other than id, type and function (served as recorded). */
function extrasOf(call: CanonicalToolCall): Record<string, unknown> {
  const { id: _id, type: _type, function: _fn, ...rest } = call;
  return rest;
}

/** The content as served: the text as recorded (`""` stays `""`), parts joined, null when there was none. */
function contentText(answer: StoredAnswer): string | null {
  const content = answer.message.content;
  if (content === undefined || content === null) return null;
  return Array.isArray(content) ? content.join("") : content;
}

/** Fields rendered on their own (the envelope around the message too); every other recorded field is served as recorded. */
const RENDERED = new Set(["role", "content", "tool_calls", "tool_call_id", ...ENVELOPE_KEYS]);

/** The recorded fields served as they are (refusal, annotations, function_call, name, reasoning_content, …). */
function recordedFields(answer: StoredAnswer): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(answer.message)) if (!RENDERED.has(k)) out[k] = v;
  const fn = out.function_call as { name: string; arguments: string } | null | undefined;
  if (fn && typeof fn === "object") out.function_call = inApiOrder(fn);
  return out;
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
  const message: Record<string, unknown> = { role: "assistant", content: contentText(answer), ...recordedFields(answer) };
  if (toolCalls) message.tool_calls = toolCalls;
  const envelope = envelopeOf(answer.message);
  return {
    id: ctx.id,
    object: "chat.completion",
    created: ctx.created,
    model: ctx.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: answer.finishReason, ...envelope.choice }],
    ...envelope.response,
    usage: usageOf(answer),
    system_fingerprint: null,
  };
}

/**
 * The chunks of a streamed answer, as server-sent events ending in `[DONE]`:
 * the role (content `""` when the answer has text, null when it has none),
 * other recorded fields, the content, the refusal, a function call, each tool
 * call (id, name and any other recorded field, then arguments), the finish reason, and the usage chunk
 * when `includeUsage` is set. A recorded envelope goes where the upstream streams it: a response field
 * on every chunk (the service tier, OpenRouter's provider, any field recorded from a JSON answer) unless
 * the stream sent it once or changed it (then once, on the finish chunk, Groq's `x_groq`); the choice's
 * fields on the finish chunk (vLLM's `stop_reason`); Azure's prompt filter results in a first chunk with
 * no choices, the content filter results on the content's chunk (the finish chunk when there is no text)
 * and `{}` on the other chunks.
 */
export function renderChunkStream(answer: StoredAnswer, ctx: RenderContext, includeUsage: boolean): string {
  const { choice: recordedChoice, response, once = [] } = envelopeOf(answer.message);
  const every: Record<string, unknown> = {};
  const last: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(response)) if (k !== PROMPT_FILTERS) (once.includes(k) ? last : every)[k] = v;
  const base = { id: ctx.id, object: "chat.completion.chunk", created: ctx.created, model: ctx.model, ...every, system_fingerprint: null };
  const extra = includeUsage ? { usage: null } : {};
  const text = contentText(answer);
  const { [CONTENT_FILTERS]: filters, ...finishFields } = recordedChoice;
  const annotated = (delta: Record<string, unknown>, finish: string | null) => (finish !== null ? !text : delta.content === text && !!text);
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => {
    const choice: Record<string, unknown> = { index: 0, delta, logprobs: null, finish_reason: finish };
    if (filters !== undefined) choice[CONTENT_FILTERS] = annotated(delta, finish) ? filters : {};
    if (finish !== null) Object.assign(choice, finishFields);
    return `data: ${JSON.stringify({ ...base, ...(finish !== null ? last : {}), choices: [choice], ...extra })}\n\n`;
  };
  const {
    refusal,
    function_call: fn,
    annotations,
    ...fields
  } = recordedFields(answer) as { refusal?: string | null; function_call?: { name: string; arguments: string }; annotations?: unknown[] };
  const first: Record<string, unknown> = { role: "assistant", content: text === null ? null : "" };
  if (refusal !== undefined) first.refusal = null;
  let out =
    response[PROMPT_FILTERS] === undefined
      ? ""
      : `data: ${JSON.stringify({ choices: [], created: 0, id: "", model: "", object: "", [PROMPT_FILTERS]: response[PROMPT_FILTERS] })}\n\n`;
  out += chunk(first);
  // Fields the cache does not read (reasoning_content, …) come first, whole, as a model streams its reasoning before its answer.
  for (const [k, v] of Object.entries(fields)) out += chunk({ [k]: v });
  if (text) out += chunk({ content: text });
  if (refusal) out += chunk({ refusal });
  if (annotations && annotations.length > 0) out += chunk({ annotations });
  if (fn) {
    out += chunk({ function_call: { name: fn.name, arguments: "" } });
    out += chunk({ function_call: { arguments: fn.arguments } });
  }
  servedToolCalls(answer)?.forEach((call, index) => {
    // The first chunk carries everything but the arguments, recorded fields (`extra_content`, …) included.
    out += chunk({ tool_calls: [{ index, ...call, function: { ...call.function, arguments: "" } }] });
    out += chunk({ tool_calls: [{ index, function: { arguments: call.function.arguments } }] });
  });
  out += chunk({}, answer.finishReason);
  if (includeUsage) out += `data: ${JSON.stringify({ ...base, choices: [], usage: usageOf(answer) })}\n\n`;
  return `${out}data: [DONE]\n\n`;
}
