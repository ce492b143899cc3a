import { REFUND_TOOLS, refundDeskScript } from "../refund-desk";
import { between, type Workflow } from "../eval-workflows/types";

/** One order of the demo's refund agent (tools/refund-desk.ts) and its state. */
export interface OrderCase {
  orderId: string;
  /** `missing`: no such order. */
  status: string;
  amount: number;
}

/**
 * The `npm run demo` refund desk as a traffic workflow: the model looks the order up, refunds a
 * delivered one (copying its id and amount) and explains any other status. Every value its answers
 * use is copied from the order, so after a few delivered orders the tree learns a template that
 * serves new orders; statuses stay branches.
 */
export const orderDesk: Workflow<OrderCase> = {
  name: "order-desk",
  system: "You are a refund desk agent. Look orders up before refunding.",
  tools: [...REFUND_TOOLS],
  kinds: [
    ["delivered", 6],
    ["shipped", 1],
    ["processing", 1],
  ],
  traps: ["missing"],
  makeCase: (rng, kind) => ({ orderId: `A-${between(rng, 100, 9999)}`, status: kind, amount: between(rng, 500, 20_000) / 100 }),
  userMessage: (c) => `Hi, please refund order #${c.orderId}.`,
  execTool(c, call) {
    if (call.name === "get_order")
      return c.status === "missing" || call.args.order_id !== c.orderId
        ? { order_id: call.args.order_id, status: "missing" }
        : { order_id: c.orderId, status: c.status, amount: c.amount };
    return { order_id: c.orderId, refunded: true };
  },
  script: refundDeskScript,
  bindingsOf: (c) => ({ order_id: c.orderId }),
};
