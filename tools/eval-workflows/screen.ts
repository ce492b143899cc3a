import type { ChatBody, ScriptedMessage } from "../scripted-model";
import { between, FIRST, firstUser, LAST, lastToolResult, pick, say, toolCall, type Workflow } from "./types";

/** One screening request: a member, the city they ask from and a ticket number. */
export interface ScreenCase {
  first: string;
  last: string;
  memberId: string;
  city: string;
  ticket: number;
  ref: string;
}

/**
 * The decisions of this desk depend on values the model never copies into an
 * answer: a lookup table (city -> desk), a parity rule (even tickets are
 * approved, odd ones held) and a set membership (VIP last names are
 * fast-tracked). Only the member id and the reference are copied.
 */
export const DESKS: Readonly<Record<string, string>> = {
  Paris: "west",
  Dublin: "west",
  Lisbon: "west",
  Berlin: "east",
  Vienna: "east",
  Warsaw: "east",
  Rome: "south",
  Madrid: "south",
  Athens: "south",
  Oslo: "north",
  Helsinki: "north",
  Stockholm: "north",
};
/** The cities ordinary cases come from; the other cities of DESKS are traps. */
const WARM_CITIES = ["Paris", "Berlin", "Rome", "Oslo"];
const UNSEEN_CITIES = Object.keys(DESKS).filter((c) => !WARM_CITIES.includes(c));
export const VIP = new Set(["Lovelace", "Hopper", "Turing"]);
const ORDINARY_LAST = LAST.filter((l) => !VIP.has(l));

const TOOLS = [
  {
    type: "function",
    function: { name: "check_member", parameters: { type: "object", properties: { member_id: { type: "string" } }, required: ["member_id"] } },
  },
  { type: "function", function: { name: "approve", parameters: { type: "object", properties: { member_id: { type: "string" }, desk: { type: "string" } } } } },
  { type: "function", function: { name: "hold", parameters: { type: "object", properties: { member_id: { type: "string" }, desk: { type: "string" } } } } },
  {
    type: "function",
    function: { name: "fast_track", parameters: { type: "object", properties: { member_id: { type: "string" }, desk: { type: "string" } } } },
  },
];

function request(body: ChatBody): { last: string; memberId: string; city: string; ticket: number } {
  const text = firstUser(body);
  return {
    last: /from \S+ (\S+):/.exec(text)?.[1] ?? "",
    memberId: /member (\S+),/.exec(text)?.[1] ?? "",
    city: /city (\S+),/.exec(text)?.[1] ?? "",
    ticket: Number(/ticket (\d+)\./.exec(text)?.[1] ?? "0"),
  };
}

/** The scripted screening model. */
function script(body: ChatBody): ScriptedMessage {
  const r = request(body);
  const tool = lastToolResult(body);
  if (!tool) return toolCall("check_member", { member_id: r.memberId });
  if (tool.name === "check_member") {
    const desk = DESKS[r.city];
    if (!desk) return say("Sorry, this request is outside our area.");
    if (VIP.has(r.last)) return toolCall("fast_track", { member_id: r.memberId, desk });
    return toolCall(r.ticket % 2 === 0 ? "approve" : "hold", { member_id: r.memberId, desk });
  }
  return say(`Done: reference ${String(tool.result.ref)}.`);
}

/** A screening desk whose every decision rests on a value no answer copies. */
export const screenDesk: Workflow<ScreenCase> = {
  name: "screening-desk",
  system: "You screen member requests. Check the member first, then route the request to the desk of its city.",
  tools: TOOLS,
  kinds: [["ordinary", 1]],
  traps: ["unseen-city", "unknown-city", "vip", "odd-ticket", "even-ticket"],
  makeCase(rng, kind) {
    const city = kind === "unseen-city" ? pick(rng, UNSEEN_CITIES) : kind === "unknown-city" ? pick(rng, ["Sydney", "Lima", "Cairo"]) : pick(rng, WARM_CITIES);
    const n = between(rng, 50, 499);
    return {
      first: pick(rng, FIRST),
      last: kind === "vip" ? pick(rng, [...VIP]) : pick(rng, ORDINARY_LAST),
      memberId: `M-${between(rng, 1000, 9999)}`,
      city,
      ticket: kind === "odd-ticket" ? 2 * n + 1 : kind === "even-ticket" ? 2 * n : between(rng, 100, 999),
      ref: `R-${between(rng, 10000, 99999)}`,
    };
  },
  userMessage: (c) => `Screening request from ${c.first} ${c.last}: member ${c.memberId}, city ${c.city}, ticket ${c.ticket}.`,
  execTool(c, call) {
    if (call.name === "check_member") return { member_id: call.args.member_id, active: true };
    return { ref: c.ref };
  },
  script,
  // Every value besides the member id is decided on: the class is all of them (the city, the last name, the ticket).
  rangeOf: (c) => ({ cls: `${c.city}/${c.last}/${c.ticket}`, ranged: [] }),
  bindingsOf: (c) => ({ member_id: c.memberId }),
};
