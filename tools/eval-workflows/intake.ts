import type { ChatBody, ScriptedMessage } from "../scripted-model";
import { between, FIRST, firstUser, LAST, lastToolResult, pick, say, toolCall, type Workflow } from "./types";

/** One sign-up from a web form and the world behind it. */
export interface IntakeCase {
  first: string;
  last: string;
  email: string;
  plan: string;
  seats: number;
  country: string;
  /** Set when the email already belongs to a customer. */
  existing: string | null;
  accountId: string;
  leadId: string;
}

const SEAT_LIMIT = 40;
const COUNTRIES = ["US", "GB", "DE", "FR"];
const PLANS = ["starter", "team"];

const TOOLS = [
  { type: "function", function: { name: "lookup_customer", parameters: { type: "object", properties: { email: { type: "string" } }, required: ["email"] } } },
  {
    type: "function",
    function: {
      name: "create_account",
      parameters: { type: "object", properties: { name: { type: "string" }, email: { type: "string" }, plan: { type: "string" }, seats: { type: "integer" } } },
    },
  },
  {
    type: "function",
    function: {
      name: "send_welcome",
      parameters: { type: "object", properties: { to: { type: "string" }, first_name: { type: "string" }, account_id: { type: "string" } } },
    },
  },
  {
    type: "function",
    function: {
      name: "create_lead",
      parameters: { type: "object", properties: { email: { type: "string" }, seats: { type: "integer" }, note: { type: "string" } } },
    },
  },
];

function form(body: ChatBody): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [, k, v] of firstUser(body).matchAll(/(\w+)=([^;]+?)(?:;|\.$)/g)) out[k] = v.trim();
  return out;
}

/** The scripted intake model: it copies the form into tool calls and decides on country, plan, seats and existing customers. */
function script(body: ChatBody): ScriptedMessage {
  const f = form(body);
  const [first, ...rest] = (f.name ?? "").split(" ");
  const seats = Number(f.seats);
  const tool = lastToolResult(body);
  if (!tool) return toolCall("lookup_customer", { email: f.email });
  const r = tool.result;
  if (tool.name === "lookup_customer") {
    if (r.found) return say(`${f.email} already belongs to customer ${String(r.customer_id)}; nothing was created.`);
    if (!COUNTRIES.includes(f.country)) return say(`Sorry ${first}, we cannot onboard customers in ${f.country} yet.`);
    if (!PLANS.includes(f.plan)) return say(`The plan ${f.plan} does not exist; please choose starter or team.`);
    if (seats > SEAT_LIMIT) return toolCall("create_lead", { email: f.email, seats, note: "large team" });
    return toolCall("create_account", { name: f.name, email: f.email, plan: f.plan, seats });
  }
  if (tool.name === "create_account") return toolCall("send_welcome", { to: f.email, first_name: first, account_id: r.account_id });
  if (tool.name === "send_welcome") return say(`Account ${String(tool.args.account_id)} is ready for ${first} ${rest.join(" ")}.`);
  return say(`Sales will contact ${first} about ${seats} seats (lead ${String(r.lead_id)}).`);
}

/** A data-entry flow: a web form becomes an account, a sales lead or a polite refusal. */
export const intake: Workflow<IntakeCase> = {
  name: "signup-intake",
  system: `You turn sign-up forms into accounts. Check the email first. Only ${COUNTRIES.join(", ")} are supported. Plans: ${PLANS.join(", ")}. More than ${SEAT_LIMIT} seats goes to sales as a lead.`,
  tools: TOOLS,
  kinds: [
    ["new-starter", 4],
    ["new-team", 3],
    ["existing", 1],
    ["unsupported-country", 1],
  ],
  traps: ["above-warm-range", "above-limit", "unseen-plan", "unseen-country"],
  makeCase(rng, kind) {
    const first = pick(rng, FIRST);
    const last = pick(rng, LAST);
    const seats = kind === "above-warm-range" ? between(rng, 21, SEAT_LIMIT) : kind === "above-limit" ? between(rng, SEAT_LIMIT + 1, 200) : between(rng, 1, 20);
    return {
      first,
      last,
      email: `${first.toLowerCase()}.${last.toLowerCase()}${between(rng, 1, 999)}@example.com`,
      plan: kind === "unseen-plan" ? "trial" : kind === "new-team" ? "team" : "starter",
      seats,
      country: kind === "unsupported-country" ? "BR" : kind === "unseen-country" ? "JP" : pick(rng, COUNTRIES),
      existing: kind === "existing" ? `C-${between(rng, 1000, 9999)}` : null,
      accountId: `AC-${between(rng, 10000, 99999)}`,
      leadId: `L-${between(rng, 100, 999)}`,
    };
  },
  userMessage: (c) => `New sign-up from the web form: name=${c.first} ${c.last}; email=${c.email}; plan=${c.plan}; seats=${c.seats}; country=${c.country}.`,
  execTool(c, call) {
    if (call.name === "lookup_customer") return c.existing && call.args.email === c.email ? { found: true, customer_id: c.existing } : { found: false };
    if (call.name === "create_account") return { account_id: c.accountId, status: "created" };
    if (call.name === "send_welcome") return { sent: true };
    return { lead_id: c.leadId };
  },
  script,
  rangeOf: (c) => ({ cls: `${c.plan}/${c.country}/${c.existing ? "existing" : "new"}`, ranged: [c.seats] }),
  bindingsOf: (c) => ({ first: c.first, last: c.last, email: c.email }),
};
