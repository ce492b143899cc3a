import { canonicalJson } from "../../src/core/canonical";
import type { CanonicalMessage } from "../../src/core/messages";
import { chatViewOf } from "../../src/cache/templates/view";
import { keyAnthropicAnswer, keyMessagesRequest, type AnthropicKey } from "../../src/providers/anthropic/key";
import { messagesRequest } from "../../src/providers/anthropic/schema";
import { anthropicTemplateView } from "../../src/providers/anthropic/template-view";

/** Anthropic messages as the adapter keys and stores them, for the view's tests (template-view.anthropic*.test.ts). */

export const view = anthropicTemplateView;
export const SYSTEM = "You are the refund desk. Look the order up before you refund it.";
export const TOOLS = [
  {
    name: "get_order",
    description: "Look an order up.",
    input_schema: { type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"] },
  },
  {
    name: "refund",
    description: "Refund an order.",
    input_schema: { type: "object", properties: { order_id: { type: "string" }, email: { type: "string" } }, required: ["order_id", "email"] },
  },
];

/** The key of a Messages request with these messages (the desk's system prompt and tools), as the Worker keys it. */
export function keyed(messages: unknown[], body: Record<string, unknown> = {}, raw?: string): AnthropicKey {
  const request = messagesRequest.parse({ model: "claude-x", max_tokens: 1024, system: SYSTEM, tools: TOOLS, messages, ...body });
  const live = raw === undefined ? undefined : { url: new URL("http://mm.test/v1/messages"), raw };
  const result = keyMessagesRequest(request, new Headers({ "anthropic-version": "2023-06-01" }), "tenant", "default", undefined, live);
  if (!result.ok) throw new Error(JSON.stringify(result));
  return result.key;
}

/** The path messages of a key as their nodes store them (`json`). */
export const pathOf = (key: AnthropicKey): unknown[] => key.path.map((step) => JSON.parse(step.json) as unknown);

/** The answer node's stored message for the model's `content` (and the inputs as the model wrote them), under `key`. */
export function answered(key: AnthropicKey, content: unknown[], inputTexts: ReadonlyArray<string | undefined> = []) {
  const answer = keyAnthropicAnswer(key, { role: "assistant", content: content as never }, inputTexts);
  if (!answer) throw new Error("not recordable");
  return answer;
}

/** The view of a stored message, which must have one. */
export function viewOf(message: unknown): CanonicalMessage {
  const chat = chatViewOf(view, message);
  if (!chat) throw new Error(`no view: ${JSON.stringify(message)}`);
  return chat;
}

/** The message in the API's hash form, as canonical JSON. */
export const hashJson = (message: unknown): string => canonicalJson(view.hashForm(message));
