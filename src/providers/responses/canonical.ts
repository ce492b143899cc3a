import { canonicalArguments, ToolCallIds, type CanonicalError } from "../../core/canonical";
import { onlyFields } from "../../core/fields";
import { serverToolOf } from "./tools";
import type { CanonicalOutputItem, CanonicalRefusal, CanonicalText, InputItem, ResponsesNode } from "./schema";

/** The `call_id`s of one conversation as ordinals (`call_0`, …): the same map as chat's tool-call ids. */
export const CallIds = ToolCallIds;
export type CallIds = ToolCallIds;

/** A node twice: `hashed` (arguments as canonical JSON) and `stored` (arguments as the model wrote them). */
export interface CanonicalNode {
  hashed: ResponsesNode;
  stored: ResponsesNode;
}

export type ResponsesCanonical = { ok: true; nodes: CanonicalNode[]; ids: CallIds } | { ok: false; error: CanonicalError };

type Fail = CanonicalError;
const uncacheable = (reason: string): Fail => ({ kind: "uncacheable", reason });
const invalid = (message: string, param: string): Fail => ({ kind: "invalid", message, param });
const isFail = (value: unknown): value is Fail => typeof value === "object" && value !== null && "kind" in value;

/** Fields that identify or report on an item, never read by the model. */
const ITEM_NOISE = new Set(["id", "status", "type"]);

/** The item's fields other than `known` and noise, null ones dropped: kept in the key (unknown means keyed). */
function extras(item: Record<string, unknown>, known: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(item)) if (!ITEM_NOISE.has(k) && !known.includes(k) && v !== null && v !== undefined) out[k] = v;
  return out;
}

const emptyList = (v: unknown) => v === undefined || v === null || (Array.isArray(v) && v.length === 0);

/** Fields of a text part the canonical form reads (`annotations` and `logprobs` only when empty); any other makes it uncacheable. */
const TEXT_PART_FIELDS: ReadonlySet<string> = new Set(["type", "text", "annotations", "logprobs"]);
const REFUSAL_PART_FIELDS: ReadonlySet<string> = new Set(["type", "refusal"]);

/**
 * Content as canonical parts: a string is one text part; text parts of any kind are equal; anything else is not
 * cacheable. An empty text part is dropped unless `keepEmpty` (an answer's stored form: a hit serves it back).
 */
function parts(content: unknown, where: string, keepEmpty = false): Array<CanonicalText | CanonicalRefusal> | Fail {
  if (typeof content === "string") return content === "" ? [] : [{ type: "text", text: content }];
  if (!Array.isArray(content)) return invalid(`${where}.content must be a string or a list of content parts`, `${where}.content`);
  const out: Array<CanonicalText | CanonicalRefusal> = [];
  for (const part of content as Array<Record<string, unknown>>) {
    const type = part?.type;
    if ((type === "input_text" || type === "output_text" || type === "text") && typeof part.text === "string") {
      if (!emptyList(part.annotations)) return uncacheable("annotated output text");
      if (!emptyList(part.logprobs)) return uncacheable("logprobs");
      if (!onlyFields(part, TEXT_PART_FIELDS)) return uncacheable("text part with other fields");
      if (part.text !== "" || keepEmpty) out.push({ type: "text", text: part.text });
    } else if (type === "refusal" && typeof part.refusal === "string") {
      if (!onlyFields(part, REFUSAL_PART_FIELDS)) return uncacheable("refusal part with other fields");
      out.push({ type: "refusal", refusal: part.refusal });
    } else {
      return uncacheable(`${String(type)} content part`);
    }
  }
  return out;
}

/**
 * A reasoning item: stored as the model sent it (its `id`, `status` and null fields too), which a hit serves
 * back exactly, because an agent sends it back, encrypted content included. Hashed without `status` and null
 * fields; its `id` is keyed (the upstream may read the item behind it when the content is not sent), and a
 * hit serves the id the upstream issued, so an echo keys the same node.
 */
function reasoningItem(item: Record<string, unknown>): { hashed: CanonicalOutputItem; stored: CanonicalOutputItem } {
  const hashed: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(item)) if (k !== "status" && v !== null && v !== undefined) hashed[k] = v;
  return { hashed: { ...hashed, type: "reasoning" }, stored: { ...item, type: "reasoning" } };
}

/**
 * An assistant output item (a reasoning item, a message or a function call) in both forms. `answer`: the
 * model's own output, whose stored message keeps an empty text part (before 11-28 a hit served such a
 * message with `content: []`); an echo of it in the input hashes alike either way.
 */
export function outputItem(
  item: Record<string, unknown>,
  ids: CallIds,
  where: string,
  answer = false,
): { hashed: CanonicalOutputItem; stored: CanonicalOutputItem } | Fail {
  if (item.type === "reasoning") return reasoningItem(item);
  if (item.type === "function_call") {
    const { call_id: callId, name, arguments: args } = item;
    if (typeof callId !== "string" || callId === "" || typeof name !== "string" || typeof args !== "string") {
      return invalid(`${where} needs a call_id, a name and arguments as a string`, where);
    }
    const stored = { ...extras(item, ["call_id", "name", "arguments"]), type: "function_call" as const, call_id: ids.assign(callId), name, arguments: args };
    return { hashed: { ...stored, arguments: canonicalArguments(args) }, stored };
  }
  if (item.type === "custom_tool_call") {
    // A custom (free-form) tool's call: its input is text the model wrote, keyed and served as sent.
    const { call_id: callId, name, input } = item;
    if (typeof callId !== "string" || callId === "" || typeof name !== "string" || typeof input !== "string") {
      return invalid(`${where} needs a call_id, a name and an input as a string`, where);
    }
    const stored = { ...extras(item, ["call_id", "name", "input"]), type: "custom_tool_call" as const, call_id: ids.assign(callId), name, input };
    return { hashed: stored, stored };
  }
  // An answer's content as a string (a compatible server's): a hit would serve it as a list of parts.
  if (answer && !Array.isArray(item.content)) return uncacheable("message content that is not a list");
  const content = parts(item.content, where);
  if (isFail(content)) return content;
  const message = { ...extras(item, ["role", "content"]), type: "message" as const, content };
  const sent = answer ? parts(item.content, where, true) : content;
  return { hashed: message, stored: isFail(sent) || sent.length === content.length ? message : { ...message, content: sent } };
}

/** Whether an input item is one a response produced (reasoning, a function or custom tool call, an assistant message): runs of them are one node. */
export function isAssistantItem(item: InputItem): boolean {
  return (
    item.type === "function_call" ||
    item.type === "custom_tool_call" ||
    item.type === "reasoning" ||
    ((item.type === undefined || item.type === "message") && item.role === "assistant")
  );
}

/** A user, system or developer message. */
function messageNode(item: InputItem, where: string): ResponsesNode | Fail {
  const role = item.role;
  if (role !== "user" && role !== "system" && role !== "developer")
    return invalid(`${where}.role must be user, system, developer or assistant`, `${where}.role`);
  const content = parts(item.content, where);
  if (isFail(content)) return content;
  if (content.some((p) => p.type !== "text")) return invalid(`${where}: only assistant messages carry refusals`, `${where}.content`);
  return { ...extras(item, ["role", "content"]), role, content: content as CanonicalText[] };
}

/** The output of a function call: its `call_id` as the ordinal of the call it answers. */
function toolNode(item: InputItem, ids: CallIds, where: string, custom = false): ResponsesNode | Fail {
  const ordinal = typeof item.call_id === "string" ? ids.lookup(item.call_id) : undefined;
  // The call may live upstream (previous_response_id, compaction): the model judges, the cache steps aside.
  if (!ordinal) return uncacheable("function_call_output without its function_call in the input");
  let output: string | string[];
  if (typeof item.output === "string") output = item.output;
  else {
    const content = parts(item.output, `${where}.output`);
    if (isFail(content)) return content;
    output = content.map((p) => (p.type === "text" ? p.text : p.refusal));
  }
  return { ...extras(item, ["call_id", "output"]), ...(custom ? { custom: true } : {}), role: "tool", call_id: ordinal, output };
}

/**
 * Tools added mid-conversation (Codex's `additional_tools` input item): keyed as sent, as the frame keys `tools`;
 * a tool the upstream runs among them (web search, …) is passed through, as in `tools`.
 */
function toolsNode(item: InputItem): ResponsesNode | Fail {
  const tools = item.tools;
  if (!Array.isArray(tools)) return uncacheable("additional_tools without a list of tools");
  const server = serverToolOf(tools as Array<{ type?: unknown }>);
  if (server) return uncacheable(`server-side tool ${server}`);
  return { ...extras(item, ["tools"]), role: "tools", tools };
}

/**
 * Puts a Responses `input` in canonical form: one node per user, system or
 * developer message and per function output, and one assistant node for each
 * run of reasoning items, assistant messages and function calls (what one
 * response produced, echoed back). Item ids and statuses are dropped (a
 * reasoning item's id is kept); `call_id`s become ordinals.
 */
export function canonicalInput(input: string | readonly InputItem[]): ResponsesCanonical {
  const ids = new CallIds();
  if (typeof input === "string") {
    const node: ResponsesNode = { role: "user", content: input === "" ? [] : [{ type: "text", text: input }] };
    return { ok: true, nodes: [{ hashed: node, stored: node }], ids };
  }
  const nodes: CanonicalNode[] = [];
  let run: { hashed: CanonicalOutputItem[]; stored: CanonicalOutputItem[] } | null = null;
  for (let i = 0; i < input.length; i++) {
    const item = input[i];
    const where = `input[${i}]`;
    if (isAssistantItem(item)) {
      const out = outputItem(item, ids, where);
      if (isFail(out)) return { ok: false, error: out };
      if (!run) {
        run = { hashed: [], stored: [] };
        nodes.push({ hashed: { role: "assistant", items: run.hashed }, stored: { role: "assistant", items: run.stored } });
      }
      run.hashed.push(out.hashed);
      run.stored.push(out.stored);
      continue;
    }
    run = null;
    let node: ResponsesNode | Fail;
    if (item.type === "function_call_output") node = toolNode(item, ids, where);
    else if (item.type === "custom_tool_call_output") node = toolNode(item, ids, where, true);
    else if (item.type === "additional_tools") node = toolsNode(item);
    else if (item.type === undefined || item.type === "message") node = messageNode(item, where);
    else node = uncacheable(`${item.type} input item`);
    if (isFail(node)) return { ok: false, error: node };
    nodes.push({ hashed: node, stored: node });
  }
  return { ok: true, nodes, ids };
}

/**
 * Whether an answer's item is a reasoning item that says it did not finish (`status` `in_progress` or
 * `incomplete`, anything but absent, null or `completed`): a reasoning item is served with its status as
 * stored, and nothing unfinished is a replayable answer.
 */
export function unfinishedReasoning(item: unknown): boolean {
  if (typeof item !== "object" || item === null || (item as { type?: unknown }).type !== "reasoning") return false;
  const status = (item as { status?: unknown }).status;
  return status !== undefined && status !== null && status !== "completed";
}

/** The upstream's output items as one assistant node; null when an item is not replayable (server tools, unfinished reasoning). */
export function canonicalOutput(output: readonly unknown[], ids: CallIds): CanonicalNode | null {
  const hashed: CanonicalOutputItem[] = [];
  const stored: CanonicalOutputItem[] = [];
  for (const item of output as Array<Record<string, unknown>>) {
    if (
      item?.type !== "function_call" &&
      item?.type !== "custom_tool_call" &&
      item?.type !== "reasoning" &&
      !(item?.type === "message" && item.role === "assistant")
    )
      return null;
    if (unfinishedReasoning(item)) return null;
    const out = outputItem(item, ids, "output", true);
    if (isFail(out)) return null;
    hashed.push(out.hashed);
    stored.push(out.stored);
  }
  if (hashed.length === 0) return null;
  return { hashed: { role: "assistant", items: hashed }, stored: { role: "assistant", items: stored } };
}
