import { expect } from "vitest";
import { canonicalJson } from "../../src/core/canonical";
import type { CanonicalMessage } from "../../src/core/messages";
import { compose, decompose } from "../../src/cache/templates/leaves";
import { apiMessageOf, chatViewOf, withoutEnvelope } from "../../src/cache/templates/view";
import { recordingOfResponse } from "../../src/providers/responses/adapter";
import { keyResponsesRequest, type ResponsesKey } from "../../src/providers/responses/key";
import type { InputItem, ResponsesRequest } from "../../src/providers/responses/schema";
import { responsesTemplateView as view } from "../../src/providers/responses/template-view";

/**
 * Real stored Responses nodes for test/unit/template-view.responses*.test.ts: a request keyed by the adapter
 * (keyResponsesRequest) and an answer recorded from an upstream `response` (recordingOfResponse, the adapter's
 * own), so the view is tested on what the tree stores, not on hand-guessed shapes.
 */
export const SYSTEM = "You are the refund desk. Look the order up before you refund it.";
export const TOOLS = [
  { type: "function", name: "get_order", parameters: { type: "object", properties: { order_id: { type: "string" } } } },
  { type: "function", name: "refund", parameters: { type: "object", properties: { order_id: { type: "string" }, email: { type: "string" } } } },
];

/** The key of a request whose `input` is `input` (instructions and tools of the desk). */
export function keyOf(input: string | InputItem[], extra: Record<string, unknown> = {}): ResponsesKey {
  const body = { model: "gpt-test", instructions: SYSTEM, tools: TOOLS, input, ...extra } as ResponsesRequest;
  const outcome = keyResponsesRequest(body);
  if (!outcome.ok) throw new Error(`not keyed: ${JSON.stringify(outcome)}`);
  return outcome.key;
}

/** The nodes of a key's path as stored (parsed from each step's JSON). */
export const nodesOf = (key: ResponsesKey): Array<Record<string, unknown>> => key.path.map((step) => JSON.parse(step.json) as Record<string, unknown>);

/** The answer node recorded for `output` (and the response's other fields, `extra`) under `key`: its hash and stored message. */
export function answerOf(key: ResponsesKey, output: unknown[], extra: Record<string, unknown> = {}): { hash: string; message: Record<string, unknown> } {
  const response = {
    id: "resp_up1",
    object: "response",
    created_at: 1,
    status: "completed",
    model: "gpt-test",
    output,
    usage: { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 15 },
    ...extra,
  };
  const recording = recordingOfResponse(key, response, 0, 100);
  if (!recording) throw new Error("not recorded");
  return { hash: recording.answer.hash, message: JSON.parse(recording.answer.json) as Record<string, unknown> };
}

/** The stored answer of the only message of one output message item with these parts. */
export const textOutput = (...texts: string[]) => ({
  type: "message",
  id: "msg_up1",
  status: "completed",
  role: "assistant",
  content: texts.map((text) => ({ type: "output_text", text, annotations: [] })),
});
export const callOutput = (callId: string, name: string, args: string) => ({
  type: "function_call",
  id: "fc_up1",
  status: "completed",
  call_id: callId,
  name,
  arguments: args,
});

/**
 * Asserts the view's contract on one stored message: it has a view, the view gives it back exactly (not only in
 * hash form; its envelope aside, which no view holds), and the view taken apart into a template's skeleton and
 * leaves and composed again reads back (apiMessageOf) as the message. Returns the view.
 */
export function expectRoundTrip(message: unknown): CanonicalMessage {
  const chat = chatViewOf(view, message);
  expect(chat).not.toBeNull();
  expect(view.fromChat(chat as CanonicalMessage)).toEqual(withoutEnvelope(message));
  const { skeleton, leaves } = decompose(chat as CanonicalMessage);
  const composed = compose(
    skeleton,
    leaves.map((l) => l.value),
  );
  expect(composed).not.toBeNull();
  const back = apiMessageOf(view, composed as CanonicalMessage);
  expect(back).toEqual(withoutEnvelope(message));
  expect(canonicalJson(view.hashForm(back))).toBe(canonicalJson(view.hashForm(message)));
  return chat as CanonicalMessage;
}

/** Asserts that two stored messages differ, that each has a view, and that their views differ. */
export function expectDistinctViews(a: unknown, b: unknown): void {
  expect(canonicalJson(a)).not.toBe(canonicalJson(b));
  const va = chatViewOf(view, a);
  const vb = chatViewOf(view, b);
  expect(va).not.toBeNull();
  expect(vb).not.toBeNull();
  expect(canonicalJson(va)).not.toBe(canonicalJson(vb));
}
