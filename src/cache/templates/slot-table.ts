import type { Slot } from "./learned";
import { isWordValue } from "./name-ties";
import { compareRanged, isRanged, shapeOf, slotTypeOf } from "./slot-types";

/** Why two trajectories make no template (one line, for the templates API and the miss header). */
export class NoTemplate extends Error {}

/**
 * Assigns slots to differing leaf pairs: the same pair of values is the same
 * slot. A pair becomes a slot only when its values are identity-like and of
 * one type: never a categorical word, never a date in a local order, and a
 * word of letters (`Delivered`, `Lisbon`, `Ada`) only when each trajectory
 * ties it to an identity (name-ties.ts): capitalisation is no evidence.
 */
export class SlotTable {
  readonly slots: Slot[] = [];
  private readonly byPair = new Map<string, number>();

  /** `tiedA`, `tiedB`: the words each trajectory's messages tie to an identity. */
  constructor(
    private readonly tiedA: ReadonlySet<string>,
    private readonly tiedB: ReadonlySet<string>,
  ) {}

  /** The slot for a differing pair, created on first sight; throws NoTemplate (with the reason) when the values may not vary. */
  slotFor(a: string, b: string, kind: "text" | "number"): number {
    const key = `${a}\u0000${b}`;
    const known = this.byPair.get(key);
    if (known !== undefined) return known;
    const type = slotTypeOf(a, kind);
    if (type !== slotTypeOf(b, kind)) throw new NoTemplate(`\`${a}\` and \`${b}\` differ in type (${type}, ${slotTypeOf(b, kind)})`);
    if (type === "local-date") throw new NoTemplate(`\`${a}\` is a date in a local order: it cannot be ranged`);
    if (type === "quantity") throw new NoTemplate(`\`${a}\` is a quantity (a time, grouped digits, a number with a unit): it cannot be ranged`);
    if (isWordValue(a) || isWordValue(b) || type === "word" || type === "name") {
      if (!isWordValue(a) || !isWordValue(b) || !this.tiedA.has(a) || !this.tiedB.has(b))
        throw new NoTemplate(`\`${a}\` / \`${b}\` is a closed-class word (not tied to an email in the request)`);
    }
    const slot: Slot = { type, values: [a, b], shapes: [...new Set([shapeOf(a), shapeOf(b)])], copied: false };
    if (isRanged(type)) {
      if (!Number.isFinite(compareRanged(type, a, b))) throw new NoTemplate(`\`${a}\` / \`${b}\` is not a finite ${type}`);
      const low = compareRanged(type, a, b) <= 0;
      slot.min = low ? a : b;
      slot.max = low ? b : a;
    }
    this.slots.push(slot);
    this.byPair.set(key, this.slots.length - 1);
    return this.slots.length - 1;
  }

  /** The slot a leaf pair copies, or undefined. */
  copied(a: string, b: string): number | undefined {
    return this.byPair.get(`${a}\u0000${b}`);
  }
}
