import type { ChatBody, ScriptedMessage } from "../scripted-model";
import { LIMIT_CENTS, lookedUpAmount, orderAmount, orderRange, orderStatus, type RefundOrder } from "./refund-common";
import { between, FIRST, firstUser, LAST, lastToolResult, pick, say, toolCall, type Workflow } from "./types";

/**
 * The refund desk of issue 25, as a new user would write one: the full name
 * and email in the user message (the email's local part is the lowercased
 * first name and a number), an order id; the order's status (a capitalised
 * word) and its amount in cents come from a tool. The answers copy the order
 * id, the amount, the email and the full name; the last one writes the amount
 * as dollars (a derivation, not a copy). The status is decided on: four
 * statuses are refunded, `Cancelled` is denied, `Processing` explained.
 */
export interface RefundMailCase {
  first: string;
  last: string;
  email: string;
  orderId: string;
  order: RefundOrder;
  refundId: string;
}

export const REFUNDABLE = ["Delivered", "Returned", "Damaged", "Lost"];

const TOOLS = [
  { type: "function", function: { name: "get_order", parameters: { type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"] } } },
  {
    type: "function",
    function: {
      name: "refund",
      parameters: { type: "object", properties: { order_id: { type: "string" }, amount_cents: { type: "integer" }, reason: { type: "string" } } },
    },
  },
  {
    type: "function",
    function: {
      name: "send_email",
      parameters: { type: "object", properties: { to: { type: "string" }, subject: { type: "string" }, body: { type: "string" } } },
    },
  },
  { type: "function", function: { name: "escalate", parameters: { type: "object", properties: { order_id: { type: "string" }, note: { type: "string" } } } } },
];

function customer(body: ChatBody): { name: string; email: string; orderId: string } {
  const user = firstUser(body);
  return {
    name: /I'm ([^,]+),/.exec(user)?.[1] ?? "",
    email: /email (\S+)\./.exec(user)?.[1] ?? "",
    orderId: /order (\S+?)\.?$/.exec(user)?.[1] ?? "",
  };
}

function script(body: ChatBody): ScriptedMessage {
  const c = customer(body);
  const tool = lastToolResult(body);
  if (!tool) return toolCall("get_order", { order_id: c.orderId });
  const r = tool.result;
  if (tool.name === "get_order") {
    if (r.error === "not_found") return say(`Sorry ${c.name}, I could not find order ${c.orderId}.`);
    const status = String(r.status);
    const amount = Number(r.amount_cents);
    if (status === "Processing") return say(`Order ${c.orderId} is still Processing, ${c.name}; refunds open after delivery.`);
    if (!REFUNDABLE.includes(status)) return say(`Order ${c.orderId} is ${status}: refund denied, ${c.name}.`);
    if (amount > LIMIT_CENTS) return toolCall("escalate", { order_id: c.orderId, note: `${status} order of ${amount} cents` });
    return toolCall("refund", { order_id: c.orderId, amount_cents: amount, reason: status });
  }
  if (tool.name === "refund") {
    const amount = Number(tool.args.amount_cents);
    return toolCall("send_email", {
      to: c.email,
      subject: `Refund for order ${c.orderId}`,
      body: `Dear ${c.name}, refund ${String(r.refund_id)} of ${amount} cents for order ${c.orderId} is on its way.`,
    });
  }
  if (tool.name === "send_email")
    return say(
      `Refund approved for order ${c.orderId} (${String((JSON.parse(String(body.messages.find((m) => String(m.content ?? "").includes("refund_id"))?.content ?? "{}")) as { refund_id?: string }).refund_id)}): ${(lookedUpAmount(body) / 100).toFixed(2)} USD back to ${c.name} <${c.email}>.`,
    );
  return say(`Order ${c.orderId} needs a supervisor, ${c.name}: ticket ${String(r.ticket)} is open.`);
}

/** The refund desk of issue 25 (`wf-rmail`). */
export const refundMail: Workflow<RefundMailCase> = {
  name: "refund-mail",
  system: `You are the refund desk of Globex. Look the order up first. Refund Delivered, Returned, Damaged or Lost orders up to ${LIMIT_CENTS} cents, then email the customer; deny Cancelled orders; explain Processing ones; escalate larger amounts.`,
  tools: TOOLS,
  kinds: [
    ["Delivered", 3],
    ["Returned", 1],
    ["Damaged", 1],
    ["Lost", 1],
    ["Processing", 1],
  ],
  traps: ["Cancelled", "above-warm-range", "above-limit", "missing"],
  makeCase(rng, kind) {
    const first = pick(rng, FIRST);
    const status = orderStatus(kind, "Delivered");
    const amountCents = orderAmount(rng, kind);
    return {
      first,
      last: pick(rng, LAST),
      email: `${first.toLowerCase()}${between(rng, 10, 999)}@example.com`,
      orderId: `A-${between(rng, 10000, 99999)}`,
      order: kind === "missing" ? null : { status, amountCents },
      refundId: `RF-${between(rng, 10000, 99999)}`,
    };
  },
  userMessage: (c) => `Hi, I'm ${c.first} ${c.last}, email ${c.email}. Please refund my order ${c.orderId}.`,
  execTool(c, call) {
    if (call.name === "get_order") {
      if (!c.order || call.args.order_id !== c.orderId) return { error: "not_found" };
      return { order_id: c.orderId, status: c.order.status, amount_cents: c.order.amountCents };
    }
    if (call.name === "refund") return { ok: true, refund_id: c.refundId };
    if (call.name === "send_email") return { sent: true };
    return { ticket: `T-${c.orderId.slice(2)}` };
  },
  script,
  rangeOf: orderRange,
  bindingsOf: (c) => ({ name: `${c.first} ${c.last}`, email: c.email, order_id: c.orderId }),
};
