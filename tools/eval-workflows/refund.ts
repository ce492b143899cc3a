import type { ChatBody, ScriptedMessage } from "../scripted-model";
import { LIMIT_CENTS, lookedUpAmount, orderAmount, orderRange, orderStatus, type RefundOrder } from "./refund-common";
import { between, FIRST, firstUser, LAST, lastToolResult, pick, say, toolCall, type Workflow } from "./types";

/** One refund request and the world behind it. */
export interface RefundCase {
  first: string;
  last: string;
  email: string;
  orderId: string;
  /** null: the order does not exist. */
  order: RefundOrder;
  refundId: string;
  ticket: string;
}

const TOOLS = [
  {
    type: "function",
    function: {
      name: "get_order",
      description: "Look up an order.",
      parameters: { type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"] },
    },
  },
  {
    type: "function",
    function: {
      name: "refund",
      description: "Refund an order in full.",
      parameters: {
        type: "object",
        properties: { order_id: { type: "string" }, amount_cents: { type: "integer" }, email: { type: "string" } },
        required: ["order_id", "amount_cents", "email"],
      },
    },
  },
  {
    type: "function",
    function: {
      name: "escalate",
      description: "Open a supervisor ticket.",
      parameters: { type: "object", properties: { order_id: { type: "string" }, reason: { type: "string" } }, required: ["order_id", "reason"] },
    },
  },
];

/** The scripted refund-desk model: every decision depends on data (existence, status, amount vs the limit). */
function script(body: ChatBody): ScriptedMessage {
  const user = firstUser(body);
  const first = /this is (\S+) /.exec(user)?.[1] ?? "there";
  const email = /\(([^)]+)\)/.exec(user)?.[1] ?? "";
  const tool = lastToolResult(body);
  if (!tool) return toolCall("get_order", { order_id: /refund order (\S+?)\.?$/.exec(user)?.[1] ?? "" });
  const r = tool.result;
  if (tool.name === "get_order") {
    const id = String(tool.args.order_id);
    if (r.error === "not_found") return say(`I could not find order ${id}. Please check the number, ${first}.`);
    const amount = Number(r.amount_cents);
    switch (r.status) {
      case "delivered":
        return amount <= LIMIT_CENTS
          ? toolCall("refund", { order_id: id, amount_cents: amount, email })
          : toolCall("escalate", { order_id: id, reason: "amount above the automatic limit" });
      case "shipped":
      case "processing":
        return say(`Order ${id} is still ${String(r.status)}; refunds open after delivery, ${first}.`);
      case "refunded":
        return say(`Order ${id} was already refunded, ${first}.`);
      default:
        return toolCall("escalate", { order_id: id, reason: `unusual status ${String(r.status)}` });
    }
  }
  if (tool.name === "refund") return say(`Refund ${String(r.refund_id)} issued: ${String(tool.args.amount_cents)} cents back to ${String(tool.args.email)}.`);
  // A derivation (cents -> EUR with two decimals): never a verbatim copy.
  const cents = lookedUpAmount(body);
  return say(`Order ${String(tool.args.order_id)} (${(cents / 100).toFixed(2)} EUR) needs a supervisor: ticket ${String(r.ticket)} is open.`);
}

/** A refund desk: look the order up, then refund, explain or escalate. */
export const refundDesk: Workflow<RefundCase> = {
  name: "refund-desk",
  system: `You are the refund desk of Acme. Look the order up first. Refund delivered orders up to ${LIMIT_CENTS} cents in full; escalate larger ones. Explain politely when an order cannot be refunded.`,
  tools: TOOLS,
  kinds: [
    ["delivered", 6],
    ["shipped", 1],
    ["processing", 1],
    ["refunded", 1],
  ],
  traps: ["above-warm-range", "above-limit", "unseen-status", "missing"],
  makeCase(rng, kind) {
    const first = pick(rng, FIRST);
    const last = pick(rng, LAST);
    const n = between(rng, 1, 999);
    const status = kind === "unseen-status" ? "lost" : orderStatus(kind, "delivered");
    const amountCents = orderAmount(rng, kind);
    return {
      first,
      last,
      email: `${first.toLowerCase()}.${last.toLowerCase()}${n}@example.com`,
      orderId: `A-${between(rng, 1000, 99999)}`,
      order: kind === "missing" ? null : { status, amountCents },
      refundId: `RF-${between(rng, 10000, 99999)}`,
      ticket: `T-${between(rng, 1000, 9999)}`,
    };
  },
  userMessage: (c) => `Hi, this is ${c.first} ${c.last} (${c.email}). Please refund order ${c.orderId}.`,
  execTool(c, call) {
    if (call.name === "get_order") {
      if (!c.order || call.args.order_id !== c.orderId) return { error: "not_found", order_id: call.args.order_id };
      return { order_id: c.orderId, status: c.order.status, amount_cents: c.order.amountCents, customer_email: c.email };
    }
    if (call.name === "refund") return { ok: true, refund_id: c.refundId };
    return { ok: true, ticket: c.ticket };
  },
  script,
  rangeOf: orderRange,
  bindingsOf: (c) => ({ first: c.first, last: c.last, email: c.email, order_id: c.orderId }),
};
