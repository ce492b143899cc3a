import type { ChatBody, ScriptedMessage } from "../../tools/scripted-model";
import { refundDesk } from "../../tools/eval-workflows/refund";

/**
 * What the eval-apis tests (test/unit/eval-apis.<api>.test.ts) share: a refund-desk conversation with a tool
 * call and its result, as run.ts builds one, and a message's behaviour with its call ids aside.
 */

/** A refund-desk request after the order lookup: system, user, an answer with text and a call, its result. */
export function lookedUp(): ChatBody {
  return {
    model: "wf-refund-learned-t1",
    tools: refundDesk.tools,
    messages: [
      { role: "system", content: refundDesk.system },
      { role: "user", content: "Hi, this is Ada Lovelace (ada.lovelace7@example.com). Please refund order A-4242." },
      {
        role: "assistant",
        content: "Let me look that order up.",
        tool_calls: [{ id: "call_x1", type: "function", function: { name: "get_order", arguments: '{"order_id":"A-4242"}' } }],
      },
      {
        role: "tool",
        tool_call_id: "call_x1",
        content: '{"order_id":"A-4242","status":"delivered","amount_cents":1999,"customer_email":"ada.lovelace7@example.com"}',
      },
    ],
  };
}

/** An answer with text and two calls (arguments with nested values and non-ASCII text). */
export const ANSWER: ScriptedMessage = {
  role: "assistant",
  content: "Refunding now.",
  tool_calls: [
    { id: "call_r1", type: "function", function: { name: "refund", arguments: '{"order_id":"A-4242","amount_cents":1999,"email":"ada@example.com"}' } },
    { id: "call_r2", type: "function", function: { name: "escalate", arguments: '{"order_id":"A-4242","reason":"Zürich ✓","meta":{"n":[1,2]}}' } },
  ],
};

/** A message as run.ts compares it: text and calls (names and argument texts), ids aside. */
export function withoutIds(m: ScriptedMessage): unknown {
  return { content: m.content, calls: (m.tool_calls ?? []).map((c) => [c.function.name, c.function.arguments]) };
}
