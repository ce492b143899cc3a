import type { ChatBody, ScriptedMessage } from "./scripted-model";

/** The tools of the refund-desk demo agent. */
export const REFUND_TOOLS = [
  {
    type: "function",
    function: {
      name: "get_order",
      description: "Look up an order by id.",
      parameters: { type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"] },
    },
  },
  {
    type: "function",
    function: {
      name: "refund",
      description: "Refund an order in full.",
      parameters: { type: "object", properties: { order_id: { type: "string" }, amount: { type: "number" } }, required: ["order_id", "amount"] },
    },
  },
] as const;

let callCounter = 0;
const freshId = () => `call_${Date.now().toString(36)}${(callCounter++).toString(36)}`;

/**
 * A deterministic refund-desk "model": it looks the order up, refunds it if it
 * was delivered, and otherwise explains why not. Tool-call ids are fresh on
 * every generation, as real models' are.
 */
export function refundDeskScript(body: ChatBody): ScriptedMessage {
  const last = body.messages[body.messages.length - 1];
  if (last.role === "user") {
    const orderId = /#?([A-Z]-\d+)/.exec(String(last.content))?.[1] ?? "unknown";
    return {
      role: "assistant",
      content: null,
      tool_calls: [{ id: freshId(), type: "function", function: { name: "get_order", arguments: JSON.stringify({ order_id: orderId }) } }],
    };
  }
  if (last.role === "tool") {
    const result = JSON.parse(String(last.content)) as { order_id?: string; status?: string; amount?: number; refunded?: boolean };
    if (result.refunded) return { role: "assistant", content: `Done: order ${result.order_id} was refunded.` };
    if (result.status === "delivered") {
      return {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: freshId(), type: "function", function: { name: "refund", arguments: JSON.stringify({ order_id: result.order_id, amount: result.amount }) } },
        ],
      };
    }
    return { role: "assistant", content: `Order ${result.order_id} is ${result.status ?? "missing"}, so it cannot be refunded yet.` };
  }
  return { role: "assistant", content: "How can I help?" };
}
