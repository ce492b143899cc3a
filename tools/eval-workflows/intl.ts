import type { ChatBody, ScriptedMessage } from "../scripted-model";
import { between, firstUser, lastToolResult, pick, say, toolCall, type Workflow } from "./types";

/**
 * An international order desk (the third template hunt): kinds of values the other workflows never show.
 * Names with accents and in other scripts (`José Álvarez`, `Zoë Brontë`, `Иван Петров`), emails whose
 * local part holds them as written, a phone in one of several formats, a percentage, a total with a
 * currency symbol before or after it, a cart (a list) whose length is decided on, a status code, a
 * boolean and a delivery time with a UTC offset in a nested JSON tool result. The model copies the
 * name, email, phone, order id, percentage, total and delivery time; it decides on the discount (over
 * 20% is escalated), the number of items (more than 3 ship in two parcels), the status code (not 200:
 * a retry), the express flag and the delivery's local hour (18:00 or later is an evening delivery).
 */
export interface IntlCase {
  first: string;
  last: string;
  email: string;
  phone: string;
  orderId: string;
  percent: number;
  currency: "€" | "£" | "¥";
  /** The total in minor units (cents; whole yen). */
  total: number;
  items: Array<{ sku: string; qty: number }>;
  code: number;
  express: boolean;
  /** The delivery time, ISO 8601 with an offset. */
  eta: string;
}

const NAMES: Array<[string, string]> = [
  ["José", "Álvarez"],
  ["Zoë", "Brontë"],
  ["Søren", "Kierkegaard"],
  ["Łukasz", "Nowak"],
  ["Иван", "Петров"],
  ["Ada", "Lovelace"],
  ["Grace", "Hopper"],
  ["Renée", "Dupont"],
  ["Chloé", "Martin"],
  ["Mária", "Kovács"],
];

const TOOLS = [
  { type: "function", function: { name: "get_order", parameters: { type: "object", properties: { order_id: { type: "string" } } } } },
  {
    type: "function",
    function: { name: "apply_discount", parameters: { type: "object", properties: { order_id: { type: "string" }, percent: { type: "number" } } } },
  },
  { type: "function", function: { name: "send_sms", parameters: { type: "object", properties: { phone: { type: "string" }, text: { type: "string" } } } } },
  { type: "function", function: { name: "escalate", parameters: { type: "object", properties: { order_id: { type: "string" }, note: { type: "string" } } } } },
];

/** A total as the shop writes it: the euro and pound before it with two decimals, yen after it, whole. */
function money(c: Pick<IntlCase, "currency" | "total">): string {
  return c.currency === "¥" ? `${c.total}¥` : `${c.currency}${(c.total / 100).toFixed(2)}`;
}

function request(body: ChatBody): { name: string; first: string; email: string; phone: string; orderId: string; percent: number } {
  const text = firstUser(body);
  const [, name = "", email = "", phone = "", orderId = "", percent = "0"] =
    /I'm (.+) \((\S+), phone (.+)\)\. Order (\S+): please apply (\d+)%/.exec(text) ?? [];
  return { name, first: name.split(" ")[0] ?? "", email, phone, orderId, percent: Number(percent) };
}

/** The local hour of an ISO date-time as written (its own offset). */
const localHour = (eta: string) => Number(eta.slice(11, 13));

function script(body: ChatBody): ScriptedMessage {
  const r = request(body);
  const tool = lastToolResult(body);
  if (!tool) return toolCall("get_order", { order_id: r.orderId });
  const o = tool.result;
  if (tool.name === "get_order") {
    const order = o.order as { items: unknown[]; total: string; delivery: { eta: string; express: boolean } };
    if (o.code !== 200) return say(`Order ${r.orderId} could not be loaded (status ${String(o.code)}), ${r.first}: please try again later.`);
    if (order.items.length > 3) return say(`Order ${r.orderId} has ${order.items.length} items, ${r.name}: it ships in two parcels, so no discount applies.`);
    if (r.percent > 20) return toolCall("escalate", { order_id: r.orderId, note: `${r.percent}% requested by ${r.name} <${r.email}>` });
    return toolCall("apply_discount", { order_id: r.orderId, percent: r.percent });
  }
  if (tool.name === "apply_discount") {
    const get = body.messages.find((m) => m.role === "tool" && String(m.content).includes('"delivery"'));
    const order = (
      JSON.parse(String(get?.content ?? "{}")) as { order: Pick<IntlCase, "items"> & { total: string; delivery: { eta: string; express: boolean } } }
    ).order;
    const when = localHour(order.delivery.eta) >= 18 ? "an evening" : "a daytime";
    const how = order.delivery.express ? "express" : "standard";
    const items = order.items.map((i) => `${i.qty} × ${i.sku}`).join(", ");
    return toolCall("send_sms", {
      phone: r.phone,
      text: `${r.first}, order ${r.orderId} (${items}) now costs ${String(o.new_total)} instead of ${order.total}: ${how}, ${when} delivery at ${order.delivery.eta}.`,
    });
  }
  if (tool.name === "send_sms") return say(`Done: ${r.percent}% off order ${r.orderId} for ${r.name} <${r.email}>.`);
  return say(`A supervisor will review the ${r.percent}% discount on order ${r.orderId}, ${r.name} (ticket ${String(o.ticket)}).`);
}

/** A phone in the format of the currency's country. */
function phone(rng: () => number, currency: IntlCase["currency"]): string {
  const n = String(between(rng, 1000000, 9999999));
  return currency === "£" ? `+44 20 ${n.slice(0, 4)} ${n.slice(4)}` : currency === "€" ? `+351-91${n}` : `(555) ${n.slice(0, 3)}-${n.slice(3)}`;
}

/** An international order desk (`wf-intl`). */
export const intlDesk: Workflow<IntlCase> = {
  name: "intl-desk",
  system:
    "You are the order desk. Look the order up. Discounts up to 20% are applied, larger ones escalated; orders of more than 3 items ship in two parcels with no discount; text the customer the new total and delivery.",
  tools: TOOLS,
  kinds: [
    ["eur", 2],
    ["gbp", 1],
    ["jpy", 1],
  ],
  traps: ["big-discount", "many-items", "error-code", "evening", "express"],
  makeCase(rng, kind) {
    const [first, last] = pick(rng, NAMES);
    const currency = kind === "gbp" ? "£" : kind === "jpy" ? "¥" : "€";
    const day = between(rng, 4, 20);
    const hour = kind === "evening" ? between(rng, 18, 21) : between(rng, 8, 16);
    return {
      first,
      last,
      email: `${first.toLowerCase()}.${last.toLowerCase()}${between(rng, 10, 99)}@example.com`,
      phone: phone(rng, currency),
      orderId: `ORD-${between(rng, 100000, 999999)}`,
      percent: kind === "big-discount" ? between(rng, 25, 40) : between(rng, 5, 20),
      currency,
      total: currency === "¥" ? between(rng, 2000, 90000) : between(rng, 1000, 90000),
      items: Array.from({ length: kind === "many-items" ? between(rng, 4, 5) : 2 }, () => ({
        sku: `SKU-${between(rng, 1000, 9999)}`,
        qty: between(rng, 1, 4),
      })),
      code: kind === "error-code" ? pick(rng, [404, 429, 503]) : 200,
      express: kind === "express",
      eta: `2027-02-${String(day).padStart(2, "0")}T${String(hour).padStart(2, "0")}:${pick(rng, ["00", "30"])}:00${pick(rng, ["+01:00", "+00:00"])}`,
    };
  },
  userMessage: (c) => `Hi, I'm ${c.first} ${c.last} (${c.email}, phone ${c.phone}). Order ${c.orderId}: please apply ${c.percent}% off.`,
  execTool(c, call) {
    if (call.name === "get_order")
      return { code: c.code, order: { id: c.orderId, items: c.items, total: money(c), delivery: { eta: c.eta, express: c.express } } };
    if (call.name === "apply_discount") return { ok: true, new_total: money({ ...c, total: Math.round((c.total * (100 - c.percent)) / 100) }) };
    if (call.name === "send_sms") return { sent: true };
    return { ticket: `T-${c.orderId.slice(4)}` };
  },
  script,
  rangeOf: (c) => ({
    cls: `${c.currency}|${c.items.length > 3}|${c.code}|${c.express}|${localHour(c.eta) >= 18}|${c.percent > 20}`,
    ranged: [c.percent, c.total, Number(c.eta.slice(8, 10))],
  }),
  bindingsOf: (c) => ({ name: `${c.first} ${c.last}`, email: c.email, phone: c.phone, order_id: c.orderId }),
};
