import { claimsOf } from "../../src/cache/templates/placeholders";
import type { WorkloadLine } from "../workloads";

/**
 * Renaming a recorded tau-bench / tau2 conversation: each opaque identity value is replaced by a fresh
 * value of the same shape, consistently in every message (system, user text, tool results, the
 * assistant's text and tool-call arguments). An identity is opaque when the model only looks it up or
 * copies it and never decides on it: a new customer with other ids gets the same answer with the ids
 * swapped, so the renamed recorded answer is the truth for the renamed request.
 *
 * Renamed (kinds): the customer's user id, order ids, reservation ids, payment-method ids (cards, gift
 * cards, certificates, PayPal), emails, telecom customer / line / bill / device ids and phone numbers,
 * and, only with `names`, first and last names. Never renamed: amounts, prices, dates, statuses, counts,
 * item attributes, cities, airports, addresses, zips, card last-four digits, and catalogue ids
 * (item_id, product_id, plan_id, flight_number): a new customer sees the same catalogue, and the model
 * picks an item by its attributes.
 */
export type Kind = "user" | "order" | "reservation" | "payment" | "email" | "account" | "phone" | "name";

/** One renamed value: its kind, ordinal name (stable across renamings of one line), and both values. */
export interface Renamed {
  name: string;
  kind: Kind;
  original: string;
  fresh: string;
}

export interface RenamedLine {
  line: WorkloadLine;
  values: Renamed[];
  /** Originals still found after renaming (a derived form such as a bare order number): the truth is in doubt. */
  leaks: string[];
}

/** JSON keys whose string values are opaque identities, by kind. */
const KEYS: Record<string, Kind> = {
  user_id: "user",
  order_id: "order",
  orders: "order",
  reservation_id: "reservation",
  reservations: "reservation",
  payment_method_id: "payment",
  payment_id: "payment",
  exchange_payment_method_id: "payment",
  return_payment_method_id: "payment",
  email: "email",
  customer_id: "account",
  line_id: "account",
  bill_id: "account",
  device_id: "account",
  phone_number: "phone",
  first_name: "name",
  last_name: "name",
  full_name: "name",
};

/** Shapes found in free text too (a user types their ids before any tool call). */
const TEXT_SHAPES: Array<[Kind, RegExp]> = [
  ["user", /\b[a-z]+_[a-z]+_\d{4}\b/g],
  ["order", /#W\d{7}\b/g],
  ["payment", /\b(?:credit_card|gift_card|paypal|certificate)_\d{7}\b/g],
  ["email", /\b[a-z]+\.[a-z]+\d*@[a-z]+\.com\b/g],
];

const SHAPE_OF: Partial<Record<Kind, RegExp>> = {
  user: /^[a-z]+_[a-z]+_\d+$/,
  order: /^#?W\d{7}$/,
  reservation: /^[A-Z0-9]{6}$/,
  payment: /^[a-z_]+_\d+$/,
  email: /^[^@\s]+@[a-z.]+$/,
  account: /^[A-Z]\d{4,8}$/,
  phone: /^\d{3}-\d{3}-\d{4}$/,
  name: /^[A-Z][a-z]{2,}$/,
};

const FIRST = ["Aurelio", "Bettina", "Corwin", "Delphine", "Evander", "Fenella", "Gideon", "Henrika", "Isidore", "Jolene"];
const FIRST_MORE = ["Kasimir", "Lavinia", "Marius", "Nerissa", "Octavian", "Philippa", "Quentin", "Rosalind", "Severin", "Thea"];
const LAST = ["Abernathy", "Blackwood", "Castellano", "Dunmore", "Ellsworth", "Fairbanks", "Galloway", "Holloway", "Ingram", "Jablonski"];
const LAST_MORE = ["Kettering", "Lindqvist", "Marchetti", "Northcott", "Oyelaran", "Pennington", "Quiroga", "Rutherford", "Stavros", "Thornbury"];
const NAMES = [...FIRST, ...FIRST_MORE, ...LAST, ...LAST_MORE];

/** Every text of a message that the model reads or writes: content (string or text parts) and tool-call arguments. */
function textsOf(m: WorkloadLine["messages"][number]): string[] {
  const out: string[] = [];
  if (typeof m.content === "string") out.push(m.content);
  else if (Array.isArray(m.content)) for (const p of m.content as Array<{ text?: unknown }>) if (typeof p.text === "string") out.push(p.text);
  for (const c of (m.tool_calls as Array<{ function: { arguments: string } }> | undefined) ?? []) out.push(c.function.arguments);
  return out;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The opaque values of a line, in order of first appearance, each with its kind. */
export function harvest(line: WorkloadLine, names: boolean): Map<string, Kind> {
  const found = new Map<string, Kind>();
  const add = (kind: Kind, raw: string) => {
    const value = kind === "order" ? raw.replace(/^#/, "") : raw;
    if (kind === "name" && !names) return;
    if (!SHAPE_OF[kind]?.test(raw) || found.has(value)) return;
    found.set(value, kind);
  };
  const walk = (v: unknown, kind: Kind | null): void => {
    if (typeof v === "string" && kind) {
      if (kind === "name") for (const part of v.split(" ")) add(kind, part);
      else add(kind, v);
    } else if (Array.isArray(v)) for (const x of v) walk(x, kind);
    else if (v && typeof v === "object") {
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
        // Retail and airline users hold payment methods keyed by their ids.
        if (k === "payment_methods" && x && typeof x === "object" && !Array.isArray(x)) for (const id of Object.keys(x)) add("payment", id);
        walk(x, KEYS[k] ?? (k === "id" && typeof x === "string" && /^(credit_card|gift_card|paypal|certificate)_\d+$/.test(x) ? "payment" : null));
      }
    }
  };
  for (const m of line.messages) {
    for (const text of textsOf(m)) {
      if (m.role === "tool" || m.role === "assistant") walk(parseJson(text), null);
      if (m.role !== "system") for (const [kind, re] of TEXT_SHAPES) for (const hit of text.match(re) ?? []) add(kind, hit);
    }
  }
  // A name the policy or the tools spell too (a word of their text) is not only a name: left as it is.
  const fixed = JSON.stringify([line.tools, line.messages.filter((m) => m.role === "system")]);
  for (const [v, kind] of found) if (kind === "name" && claimsOf(fixed, { n: v }).length > 0) found.delete(v);
  return found;
}

/** A fresh value of the same shape: digits for digits (no leading zero added or lost), letters for letters where the kind's letters are random. */
function reshape(value: string, rng: () => number, letters: boolean): string {
  let out = "";
  for (let i = 0; i < value.length; i++) {
    const ch = value[i];
    if (/\d/.test(ch)) out += String(i === 0 || !/\d/.test(value[i - 1]) ? (ch === "0" ? 0 : 1 + Math.floor(rng() * 9)) : Math.floor(rng() * 10));
    else if (letters && /[A-Z]/.test(ch)) out += String.fromCharCode(65 + Math.floor(rng() * 26));
    else if (letters && /[a-z]/.test(ch)) out += String.fromCharCode(97 + Math.floor(rng() * 26));
    else out += ch;
  }
  return out;
}

/** Replaces every whole occurrence (placeholders.ts claimsOf: the cache's own notion of a token) of an original by its fresh value. */
export function applyRenaming(text: string, renamed: readonly Renamed[]): string {
  if (renamed.length === 0) return text;
  const bindings = Object.fromEntries(renamed.map((r) => [r.name, r.original]));
  const fresh = new Map(renamed.map((r) => [r.name, r.fresh]));
  let out = "";
  let last = 0;
  for (const [i, j, name] of claimsOf(text, bindings)) {
    out += text.slice(last, i) + (fresh.get(name) ?? text.slice(i, j));
    last = j;
  }
  return out + text.slice(last);
}

/**
 * The line renamed with fresh values drawn from `rng`; `names` renames first and last names too (and the
 * name parts of user ids and emails with them). Values are named `<kind>_<ordinal>` in order of first
 * appearance, so every renaming of one line names them alike (the client's declared bindings).
 */
export function renameLine(line: WorkloadLine, rng: () => number, names: boolean): RenamedLine {
  const found = harvest(line, names);
  const all = JSON.stringify(line.messages);
  const taken = new Set<string>(found.keys());
  const nameMap = new Map<string, string>();
  for (const [v, kind] of found) {
    if (kind !== "name") continue;
    const pool = NAMES.filter((n) => !taken.has(n) && !all.includes(n));
    const pick = pool[Math.floor(rng() * pool.length)] ?? reshape(v, rng, true);
    nameMap.set(v.toLowerCase(), pick.toLowerCase());
    nameMap.set(v, pick);
    taken.add(pick);
  }
  const renameParts = (s: string) => s.replace(/[a-z]+/g, (w) => nameMap.get(w) ?? w);
  const counts = new Map<Kind, number>();
  const values: Renamed[] = [];
  for (const [original, kind] of found) {
    let fresh = "";
    for (let tries = 0; tries < 50 && (fresh === "" || taken.has(fresh) || all.includes(fresh)); tries++) {
      if (kind === "name") fresh = nameMap.get(original) ?? original;
      else if (kind === "reservation") fresh = reshape(original, rng, true);
      else if (kind === "user") fresh = renameParts(reshape(original, rng, false));
      else if (kind === "email") {
        const [local, domain] = original.split("@");
        const renamedLocal = renameParts(reshape(local, rng, false));
        fresh = `${renamedLocal === local ? reshape(local, rng, true) : renamedLocal}@${domain}`;
      } else fresh = reshape(original, rng, false);
      if (kind === "name") break;
    }
    if (fresh === original || (kind !== "name" && taken.has(fresh))) continue;
    taken.add(fresh);
    const n = (counts.get(kind) ?? 0) + 1;
    counts.set(kind, n);
    values.push({ name: `${kind}_${n}`, kind, original, fresh });
  }
  const messages = line.messages.map((m) => {
    const out = { ...m };
    if (typeof m.content === "string") out.content = applyRenaming(m.content, values);
    else if (Array.isArray(m.content))
      out.content = (m.content as Array<Record<string, unknown>>).map((p) => (typeof p.text === "string" ? { ...p, text: applyRenaming(p.text, values) } : p));
    if (Array.isArray(m.tool_calls))
      out.tool_calls = (m.tool_calls as Array<{ function: { name: string; arguments: string } }>).map((c) => ({
        ...c,
        function: { ...c.function, arguments: applyRenaming(c.function.arguments, values) },
      }));
    return out;
  });
  const renamedText = JSON.stringify(messages);
  const leaks = values
    .filter((v) => (v.kind === "name" ? claimsOf(renamedText, { n: v.original }).length > 0 : renamedText.includes(v.original)))
    .map((v) => v.original);
  return { line: { ...line, messages }, values, leaks };
}
