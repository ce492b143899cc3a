import { z } from "zod";
import { servedIds } from "./render";
import type { InputItem, ResponsesRequest } from "./schema";

const SERVED_RESPONSE = /^resp_mm([0-9a-f]{32})([0-9a-f]{32})[0-9a-f]{8}$/;

/** The id of a served response: the tree and the answer node it was served from, and 8 random hex digits. */
export function servedResponseId(treeId: string, answerHash: string, random = crypto.randomUUID().replaceAll("-", "").slice(0, 8)): string {
  return `resp_mm${treeId}${answerHash}${random}`;
}

/** The tree and answer node of a response id the Worker issued; null for any other id. */
export function parseServedResponseId(id: string): { treeId: string; answerHash: string } | null {
  const match = SERVED_RESPONSE.exec(id);
  return match ? { treeId: match[1], answerHash: match[2] } : null;
}

/**
 * A response id the upstream issued, as recorded with its answer (src/store/tree/record.ts): printable, at
 * most 256 characters, and never one of the Worker's own (those name their answer themselves).
 */
export const upstreamResponseId = z
  .string()
  .regex(/^[\x21-\x7e]{1,256}$/)
  .refine((id) => parseServedResponseId(id) === null);

type Stored = Record<string, unknown>;

function textParts(content: unknown, type: "input_text" | "output_text"): Stored[] | null {
  if (!Array.isArray(content)) return null;
  const out: Stored[] = [];
  for (const part of content as Stored[]) {
    if (part.type === "text" && typeof part.text === "string")
      out.push(type === "output_text" ? { type, text: part.text, annotations: [] } : { type, text: part.text });
    else if (part.type === "refusal" && typeof part.refusal === "string") out.push({ type: "refusal", refusal: part.refusal });
    else return null;
  }
  return out;
}

/**
 * The call ids a client knows for the last answer's calls: the ones a hit served (the answer's hash), or the
 * upstream's own, in the order of the answer's calls (a miss relayed them as the upstream sent them).
 */
export type LastCallIds = string | readonly string[];

/** One stored assistant node as the items a client would echo; the last answer's calls get the ids the client was given. */
function assistantItems(node: Stored, last: LastCallIds | null): InputItem[] | null {
  if (!Array.isArray(node.items)) return null;
  const items = node.items as Stored[];
  const calls = items.filter((item) => item.type === "function_call" || item.type === "custom_tool_call").length;
  // Upstream call ids that are not one per call cannot be matched to the calls: nothing is resolved.
  if (Array.isArray(last) && last.length !== calls) return null;
  const out: InputItem[] = [];
  let call = 0;
  for (const [i, item] of items.entries()) {
    const { type, ...rest } = item;
    if (type === "reasoning") {
      out.push({ ...item }); // as the model sent it, as a hit served it
    } else if (type === "function_call" || type === "custom_tool_call") {
      const id = last === null ? rest.call_id : typeof last === "string" ? servedIds(last, i).call : last[call];
      call++;
      out.push({ ...rest, type, call_id: id });
    } else if (type === "message") {
      const content = textParts(rest.content, "output_text");
      if (!content) return null;
      out.push({ ...rest, type, role: "assistant", content });
    } else return null;
  }
  return out;
}

/**
 * The stored path to a served or recorded answer (root first, the answer
 * last) as Responses input items, in the form the canonical input keys back
 * to the same nodes; the last answer's calls carry the ids the client was
 * given (`last`). Null when a node is not a Responses node.
 */
export function inputItemsOf(nodes: readonly Stored[], last: LastCallIds): InputItem[] | null {
  const items: InputItem[] = [];
  for (const [i, node] of nodes.entries()) {
    const { role, ...rest } = node;
    if (role === "assistant") {
      const out = assistantItems(node, i === nodes.length - 1 ? last : null);
      if (!out) return null;
      items.push(...out);
    } else if (role === "tool") {
      const { custom, ...fields } = rest;
      const output = Array.isArray(fields.output) ? (fields.output as unknown[]).map((text) => ({ type: "input_text", text })) : fields.output;
      items.push({ ...fields, type: custom === true ? "custom_tool_call_output" : "function_call_output", output });
    } else if (role === "tools") {
      items.push({ ...rest, type: "additional_tools" });
    } else if (role === "user" || role === "system" || role === "developer") {
      const content = textParts(rest.content, "input_text");
      if (!content) return null;
      items.push({ ...rest, role, content });
    } else return null;
  }
  return items;
}

/** The request with the conversation behind `previous_response_id` spelled out in `input`, and the id removed. */
export function withPreviousInput(body: ResponsesRequest, previous: InputItem[]): ResponsesRequest {
  const input: InputItem[] = typeof body.input === "string" ? [{ role: "user", content: body.input }] : body.input;
  const { previous_response_id: _id, ...rest } = body;
  return { ...rest, input: [...previous, ...input] };
}
