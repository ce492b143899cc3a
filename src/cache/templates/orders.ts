import { compareRanged, isRanged, type SlotType } from "./slot-types";

/** What orders read of a slot: its type. */
type Typed = { type: SlotType };

/**
 * The order seen between two ranged slots of one type (two amounts, two
 * dates): the signs of `values[a] - values[b]` over the bindings that
 * confirmed the template. Ranges are kept slot by slot, so on their own they
 * would serve an amount and a balance each inside its range but in an order
 * never seen (850 of a balance of 700, when every amount seen was at most its
 * balance): a decision on their order would be replayed wrong.
 *
 * Two slots of one type that is not ranged (two account ids, two emails) keep
 * whether they were equal: 0 for equal values, 1 for different ones. A
 * transfer between two accounts says nothing of a transfer from an account to
 * itself (the model refuses it).
 */
export interface SlotOrder {
  a: number;
  b: number;
  /** Signs seen, among -1, 0 and 1 (ranged), or 0 and 1 (equal, different). */
  signs: number[];
}

/** The pairs of slots of one type: both ranged (their order is kept) or both not (whether they were equal is kept). */
function typedPairs(slots: readonly Typed[], ranged: boolean): Array<[number, number]> {
  const pairs: Array<[number, number]> = [];
  for (let a = 0; a < slots.length; a++) {
    if (isRanged(slots[a].type) !== ranged) continue;
    for (let b = a + 1; b < slots.length; b++) if (slots[a].type === slots[b].type) pairs.push([a, b]);
  }
  return pairs;
}

function signOf(slots: readonly Typed[], values: readonly string[], a: number, b: number): number {
  if (!isRanged(slots[a].type)) return values[a] === values[b] ? 0 : 1;
  return Math.sign(compareRanged(slots[a].type, values[a], values[b]));
}

/** The orders of the bindings a template was induced from (each binding: its slot values). */
export function ordersOf(slots: readonly Typed[], bindings: ReadonlyArray<readonly string[]>): SlotOrder[] {
  return [...typedPairs(slots, true), ...typedPairs(slots, false)].map(([a, b]) => ({
    a,
    b,
    signs: [...new Set(bindings.map((values) => signOf(slots, values, a, b)))],
  }));
}

/** How a reason words the sign of `values[a] - values[b]` (-1, 0, 1): an order, never the values. */
const ORDER_WORDS = ["the first below the second", "the first equal to the second", "the first above the second"];

/**
 * Why a binding may not be served for its slots' order, or null. A template
 * with ranged pairs but no orders recorded (learned before they were) serves
 * nothing; one with no equality recorded for a pair (learned before it was)
 * serves that pair only different values (the pair it was induced from had
 * some: equal in both would have made one slot).
 */
export function orderReason(slots: readonly Typed[], orders: readonly SlotOrder[] | undefined, values: readonly string[]): string | null {
  const ranged = typedPairs(slots, true);
  if (ranged.length > 0 && !orders) return `slots ${ranged[0][0]} and ${ranged[0][1]}: no order recorded (learned before orders were kept)`;
  for (const [a, b] of ranged) {
    const seen = orders?.find((o) => o.a === a && o.b === b);
    const sign = signOf(slots, values, a, b);
    if (!seen || !seen.signs.includes(sign)) return `slots ${a} and ${b} (${slots[a].type}s): ${ORDER_WORDS[sign + 1] ?? "in an order"} never confirmed`;
  }
  for (const [a, b] of typedPairs(slots, false)) {
    const sign = signOf(slots, values, a, b);
    const seen = orders?.find((o) => o.a === a && o.b === b);
    if (seen ? !seen.signs.includes(sign) : sign === 0)
      return `slots ${a} and ${b} (${slots[a].type}s): ${sign === 0 ? "equal" : "different"} values never confirmed`;
  }
  return null;
}

/** Notes the order of a confirming binding (in place); a template with no orders recorded stays without. */
export function noteOrders(slots: readonly Typed[], orders: SlotOrder[] | undefined, values: readonly string[]): void {
  if (!orders) return;
  for (const order of orders) {
    const sign = signOf(slots, values, order.a, order.b);
    if (!order.signs.includes(sign)) order.signs.push(sign);
  }
}
