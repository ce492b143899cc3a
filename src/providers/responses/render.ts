import type { StoredAnswer } from "../../core/answer";
import type { Spelling } from "../../core/number-text";
import { spelledJson } from "../../core/spelled-json";
import { aroundResponse, servedSpellings, servedUsage, storedResponseEnvelope } from "./envelope";
import { storedResponsesAnswer, type CanonicalOutputItem, type ResponsesRequest } from "./schema";

/** A recorded Responses answer, validated for rendering. */
export interface ResponsesAnswer {
  hash: string;
  items: CanonicalOutputItem[];
  promptTokens: number;
  completionTokens: number;
  /** What the recorded response carried around its output (./envelope.ts); null for an answer recorded without. */
  envelope?: Record<string, unknown> | null;
}

const validated = new WeakMap<StoredAnswer, ResponsesAnswer | null>();

/** Reads a stored answer as Responses output items; null when the node holds something else. */
export function responsesAnswerOf(answer: StoredAnswer): ResponsesAnswer | null {
  const known = validated.get(answer);
  if (known !== undefined) return known;
  const parsed = storedResponsesAnswer.safeParse(answer.message as unknown);
  const result = parsed.success
    ? {
        hash: answer.hash,
        items: parsed.data.items as CanonicalOutputItem[],
        promptTokens: answer.promptTokens,
        completionTokens: answer.completionTokens,
        envelope: storedResponseEnvelope(answer.message),
      }
    : null;
  validated.set(answer, result);
  return result;
}

/** Id prefixes of what a hit serves; a later miss strips such item ids before the upstream sees them. */
export const SERVED_ITEM_PREFIXES = ["msg_mm", "fc_mm", "ctc_mm"] as const;

/** Fresh ids for a served answer: deterministic per node and position, so what the client echoes keys the same path. */
export function servedIds(answerHash: string, index: number): { message: string; functionCall: string; customCall: string; call: string } {
  const tail = `${answerHash.slice(0, 24)}${index.toString(36)}`;
  return {
    message: `${SERVED_ITEM_PREFIXES[0]}${tail}`,
    functionCall: `${SERVED_ITEM_PREFIXES[1]}${tail}`,
    customCall: `${SERVED_ITEM_PREFIXES[2]}${tail}`,
    call: `call_mm${tail}`,
  };
}

type Served = Record<string, unknown>;

/**
 * The output items as the API returns them: fresh ids, text parts as `output_text`, arguments as recorded;
 * a reasoning item exactly as the model sent it, its id included (the upstream's: an agent sends the item
 * back, and its encrypted content belongs to that id).
 */
function servedItems(answer: ResponsesAnswer): Served[] {
  return answer.items.map((item, i) => {
    const ids = servedIds(answer.hash, i);
    if (item.type === "reasoning") return { ...item };
    if (item.type === "function_call") {
      const { type: _t, call_id: _c, name, arguments: args, ...extra } = item;
      return { id: ids.functionCall, type: "function_call", status: "completed", arguments: args, call_id: ids.call, name, ...extra };
    }
    if (item.type === "custom_tool_call") {
      const { type: _t, call_id: _c, name, input, ...extra } = item;
      return { id: ids.customCall, type: "custom_tool_call", status: "completed", call_id: ids.call, input, name, ...extra };
    }
    const { type: _t, content, ...extra } = item as Extract<CanonicalOutputItem, { type: "message" }>;
    const parts = content.map((p) =>
      p.type === "text" ? { type: "output_text", annotations: [], logprobs: [], text: p.text } : { type: "refusal", refusal: p.refusal },
    );
    return { id: ids.message, type: "message", status: "completed", content: parts, role: "assistant", ...extra };
  });
}

export interface ResponsesRenderContext {
  /** The response id (`resp_…`). */
  id: string;
  createdAt: number;
  /** The `previous_response_id` the client sent (resolved or not), echoed as the API echoes it. */
  previousResponseId?: string | null;
  /** The request's numbers written otherwise than JSON.stringify would, outside `input` (its frame's): an echo writes them so. */
  requestSpellings?: readonly Spelling[];
}

/**
 * The `response` object: the request's parameters echoed the way the API echoes them (with the API's
 * defaults), under the recorded response's fields and this request's echo fields (./envelope.ts).
 */
function responseShell(answer: ResponsesAnswer, body: ResponsesRequest, ctx: ResponsesRenderContext, status: string, output: Served[], usage: unknown): Served {
  const b = body as Record<string, unknown>;
  const or = (key: string, fallback: unknown) => (b[key] === undefined || b[key] === null ? fallback : b[key]);
  const base = {
    id: ctx.id,
    object: "response",
    created_at: ctx.createdAt,
    status,
    background: false,
    error: null,
    incomplete_details: null,
    instructions: or("instructions", null),
    max_output_tokens: or("max_output_tokens", null),
    model: body.model,
    output,
    parallel_tool_calls: or("parallel_tool_calls", true),
    previous_response_id: ctx.previousResponseId ?? null,
    reasoning: or("reasoning", { effort: null, summary: null }),
    store: or("store", true),
    temperature: or("temperature", 1),
    text: or("text", { format: { type: "text" } }),
    tool_choice: or("tool_choice", "auto"),
    tools: or("tools", []),
    top_p: or("top_p", 1),
    truncation: or("truncation", "disabled"),
    usage,
    user: or("user", null),
    metadata: or("metadata", {}),
  };
  return aroundResponse(base, answer.envelope ?? null, body, ctx.previousResponseId ?? null, status === "completed" ? ctx.createdAt : null);
}

/** A served answer as the API's JSON `response`. */
export function renderResponse(answer: ResponsesAnswer, body: ResponsesRequest, ctx: ResponsesRenderContext): Served {
  return responseShell(answer, body, ctx, "completed", servedItems(answer), servedUsage(answer.envelope ?? null, answer.promptTokens, answer.completionTokens));
}

/** How the `response` of a hit writes its numbers: the recorded fields' as recorded, the echoed ones' as this request wrote them. */
function spellingsOf(answer: ResponsesAnswer, ctx: ResponsesRenderContext): Spelling[] {
  return servedSpellings(answer.envelope ?? null, ctx.requestSpellings ?? []);
}

/** A served answer as the API's JSON `response`, its text: numbers written as recorded (./envelope.ts). */
export function renderResponseJson(answer: ResponsesAnswer, body: ResponsesRequest, ctx: ResponsesRenderContext): string {
  return spelledJson(renderResponse(answer, body, ctx), spellingsOf(answer, ctx));
}

/**
 * A reasoning item's events, as the API streams them: the item added with its summary empty, each summary
 * part (added, its text in one delta, done), then the item done as recorded.
 */
function sendReasoning(send: (type: string, data: Served) => void, item: Served, output_index: number): void {
  const item_id = item.id;
  const summary = Array.isArray(item.summary) ? (item.summary as Served[]) : [];
  send("response.output_item.added", { output_index, item: { ...item, summary: [] } });
  summary.forEach((part, summary_index) => {
    const at = { item_id, output_index, summary_index };
    const text = typeof part.text === "string" ? part.text : "";
    send("response.reasoning_summary_part.added", { ...at, part: { ...part, text: "" } });
    send("response.reasoning_summary_text.delta", { ...at, delta: text });
    send("response.reasoning_summary_text.done", { ...at, text });
    send("response.reasoning_summary_part.done", { ...at, part });
  });
}

/**
 * The Responses event stream of a served answer: `response.created`,
 * `response.in_progress`, per item `output_item.added`, its content part or
 * arguments (one delta each, then the `done` events) and `output_item.done`,
 * then `response.completed` with the whole response.
 */
export function renderResponseEvents(answer: ResponsesAnswer, body: ResponsesRequest, ctx: ResponsesRenderContext): string {
  let sequence = 0;
  let out = "";
  // The events that carry the whole `response` write its numbers as the JSON hit does.
  const spelled = spellingsOf(answer, ctx).map(([pointer, text]): Spelling => [`/response${pointer}`, text]);
  const send = (type: string, data: Served) => {
    const event = { type, sequence_number: sequence++, ...data };
    out += `event: ${type}\ndata: ${"response" in data ? spelledJson(event, spelled) : JSON.stringify(event)}\n\n`;
  };
  const pending = responseShell(answer, body, ctx, "in_progress", [], null);
  send("response.created", { response: pending });
  send("response.in_progress", { response: pending });
  servedItems(answer).forEach((item, output_index) => {
    const item_id = item.id;
    if (item.type === "reasoning") {
      sendReasoning(send, item, output_index);
    } else if (item.type === "function_call") {
      send("response.output_item.added", { output_index, item: { ...item, status: "in_progress", arguments: "" } });
      send("response.function_call_arguments.delta", { item_id, output_index, delta: item.arguments });
      send("response.function_call_arguments.done", { item_id, output_index, arguments: item.arguments });
    } else if (item.type === "custom_tool_call") {
      send("response.output_item.added", { output_index, item: { ...item, status: "in_progress", input: "" } });
      send("response.custom_tool_call_input.delta", { item_id, output_index, delta: item.input });
      send("response.custom_tool_call_input.done", { item_id, output_index, input: item.input });
    } else {
      send("response.output_item.added", { output_index, item: { ...item, status: "in_progress", content: [] } });
      (item.content as Served[]).forEach((part, content_index) => {
        const at = { item_id, output_index, content_index };
        if (part.type === "output_text") {
          send("response.content_part.added", { ...at, part: { ...part, text: "" } });
          send("response.output_text.delta", { ...at, delta: part.text, logprobs: [] });
          send("response.output_text.done", { ...at, text: part.text, logprobs: [] });
        } else {
          send("response.content_part.added", { ...at, part: { ...part, refusal: "" } });
          send("response.refusal.delta", { ...at, delta: part.refusal });
          send("response.refusal.done", { ...at, refusal: part.refusal });
        }
        send("response.content_part.done", { ...at, part });
      });
    }
    send("response.output_item.done", { output_index, item });
  });
  send("response.completed", { response: renderResponse(answer, body, ctx) });
  return out;
}
