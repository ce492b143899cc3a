import type { ChatBody, ScriptedMessage } from "../scripted-model";
import { between, FIRST, firstUser, LAST, lastToolResult, pick, say, toolCall, type Workflow } from "./types";

/**
 * The booking desk of issue 25: a full name, a customer id, a phone, a
 * one-word place and a date. The model books visits in most places and
 * refuses one (`Coimbra`: booked by phone); the place is a word from a small
 * vocabulary that the model both copies and decides on, so it must stay
 * structural, never a slot.
 */
export interface BookingCase {
  first: string;
  last: string;
  customerId: string;
  phone: string;
  place: string;
  date: string;
  bookingId: string;
}

export const WARM_PLACES = ["Lisbon", "Porto", "Braga"];
/** Booked too, but never seen while warming. */
const OTHER_PLACES = ["Faro", "Evora"];
/** The place the model never books online. */
export const REFUSED_PLACE = "Coimbra";

const TOOLS = [
  { type: "function", function: { name: "check_customer", parameters: { type: "object", properties: { customer_id: { type: "string" } } } } },
  {
    type: "function",
    function: {
      name: "book_visit",
      parameters: {
        type: "object",
        properties: { customer_id: { type: "string" }, name: { type: "string" }, place: { type: "string" }, date: { type: "string" } },
      },
    },
  },
  { type: "function", function: { name: "send_sms", parameters: { type: "object", properties: { phone: { type: "string" }, text: { type: "string" } } } } },
];

function request(body: ChatBody): { name: string; customerId: string; phone: string; place: string; date: string } {
  const text = firstUser(body);
  return {
    name: /visit for ([^(]+) \(/.exec(text)?.[1] ?? "",
    customerId: /customer (\S+),/.exec(text)?.[1] ?? "",
    phone: /phone (\S+)\)/.exec(text)?.[1] ?? "",
    place: /in (\S+) on/.exec(text)?.[1] ?? "",
    date: /on (\S+?)\.$/.exec(text)?.[1] ?? "",
  };
}

function script(body: ChatBody): ScriptedMessage {
  const r = request(body);
  const tool = lastToolResult(body);
  if (!tool) return toolCall("check_customer", { customer_id: r.customerId });
  if (tool.name === "check_customer") {
    if (r.place === REFUSED_PLACE) return say(`Visits in ${r.place} are booked by phone, ${r.name}: please call us.`);
    return toolCall("book_visit", { customer_id: r.customerId, name: r.name, place: r.place, date: r.date });
  }
  if (tool.name === "book_visit")
    return toolCall("send_sms", { phone: r.phone, text: `${r.name}, your visit in ${r.place} on ${r.date} is booked (${String(tool.result.booking_id)}).` });
  return say(`Booked: ${r.name}, ${r.place}, ${r.date}.`);
}

/** A booking desk (`wf-book`). */
export const bookingDesk: Workflow<BookingCase> = {
  name: "booking-desk",
  system: "You book visits. Check the customer first, then book the visit and text the customer. Visits in Coimbra are booked by phone only.",
  tools: TOOLS,
  kinds: WARM_PLACES.map((p): [string, number] => [p, 1]),
  traps: ["refused-place", "unseen-place", "date-after-range"],
  makeCase(rng, kind) {
    const place =
      kind === "refused-place" ? REFUSED_PLACE : kind === "unseen-place" ? pick(rng, OTHER_PLACES) : WARM_PLACES.includes(kind) ? kind : pick(rng, WARM_PLACES);
    const day = kind === "date-after-range" ? between(rng, 20, 28) : between(rng, 2, 18);
    return {
      first: pick(rng, FIRST),
      last: pick(rng, LAST),
      customerId: `C-${between(rng, 1000, 9999)}`,
      phone: `+351-9${between(rng, 10000000, 99999999)}`,
      place,
      date: `2027-01-${String(day).padStart(2, "0")}`,
      bookingId: `B-${between(rng, 100000, 999999)}`,
    };
  },
  userMessage: (c) => `Please book a visit for ${c.first} ${c.last} (customer ${c.customerId}, phone ${c.phone}) in ${c.place} on ${c.date}.`,
  execTool(c, call) {
    if (call.name === "check_customer") return { customer_id: call.args.customer_id, active: true };
    if (call.name === "book_visit") return { booking_id: c.bookingId };
    return { sent: true };
  },
  script,
  rangeOf: (c) => ({ cls: c.place, ranged: [Number(c.date.slice(-2))] }),
  bindingsOf: (c) => ({ name: `${c.first} ${c.last}`, customer_id: c.customerId, phone: c.phone }),
};
