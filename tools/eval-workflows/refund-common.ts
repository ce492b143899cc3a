import type { ChatBody } from "../scripted-model";
import { between } from "./types";

/**
 * What the two refund desks (refund.ts, refund-mail.ts) share: the automatic refund limit, the order a case
 * is built around (its status and amount by kind, the amount's warm range), and the amount a script reads
 * back from the order lookup.
 */

/** Orders up to this many cents are refunded at once; larger ones are escalated. */
export const LIMIT_CENTS = 50_000;

/** The order of a case: null when it does not exist. */
export type RefundOrder = { status: string; amountCents: number } | null;

/** The traps about the amount: within the limit but above the warm range (1,000-30,000), or above the limit. */
const AMOUNT_TRAPS = ["above-warm-range", "above-limit"];

/** The status of a case of `kind`: the kind itself, but a delivered order (`delivered`, as the desk spells it) for the amount traps. */
export function orderStatus(kind: string, delivered: string): string {
  return AMOUNT_TRAPS.includes(kind) ? delivered : kind;
}

/** The amount of a case of `kind`, in cents (one draw of `rng`). */
export function orderAmount(rng: () => number, kind: string): number {
  if (kind === "above-warm-range") return between(rng, 30_001, LIMIT_CENTS);
  if (kind === "above-limit") return between(rng, LIMIT_CENTS + 1, 99_999);
  return between(rng, 1_000, 30_000);
}

/** The amount the order lookup returned in the conversation so far, in cents (0 before it). */
export function lookedUpAmount(body: ChatBody): number {
  const order = body.messages.map((m) => String(m.content ?? "")).find((c) => c.includes("amount_cents"));
  return order ? Number((JSON.parse(order) as { amount_cents: number }).amount_cents) : 0;
}

/** A case's class (its order's status, or `missing`) and the values that must fall in a warm range (the amount). */
export function orderRange(c: { order: RefundOrder }): { cls: string; ranged: number[] } {
  return { cls: c.order ? c.order.status : "missing", ranged: c.order ? [c.order.amountCents] : [] };
}
