import { compareRanged, type SlotType } from "./slot-types";

/** The longest reason a `muscle-mem-template-miss` header carries. */
const MAX_REASON = 200;
/** The longest value a reason quotes: a longer one is cut, so that the rule it breaks still fits the line. */
const MAX_QUOTED = 40;

/**
 * A reason as a header value: printable ASCII only (HTTP header values are
 * bytes; a value such as `Zoë` is written `Zo?`), at most 200 characters.
 *
 * @example headerSafe("value `Zoë` outside the range") // => "value `Zo?` outside the range"
 */
export function headerSafe(reason: string): string {
  const ascii = reason.replace(/[^\x20-\x7e]/g, "?");
  return ascii.length > MAX_REASON ? `${ascii.slice(0, MAX_REASON - 3)}...` : ascii;
}

/**
 * A value of the request as a reason quotes it: in backticks, at most 40 characters (a longer one is cut
 * with `...`). A reason quotes only the request's own values and the template's shape (a shape, a fixed
 * part every confirmed value shared), never another request's value (a range's bounds, a template's literal).
 *
 * @example quoted("SUB-4004") // => "`SUB-4004`"
 */
export function quoted(value: string): string {
  return `\`${value.length > MAX_QUOTED ? `${value.slice(0, MAX_QUOTED - 3)}...` : value}\``;
}

/**
 * A slot and the request's value in it, as reasons name them: `slot 2 (quantity `25kg`)`. Slots count
 * from 0, as `GET /api/trees/:id/templates` lists them.
 *
 * @example slotLabel(2, "quantity", "25kg") // => "slot 2 (quantity `25kg`)"
 */
export function slotLabel(index: number, type: SlotType, value: string): string {
  return `slot ${index} (${type} ${quoted(value)})`;
}

/** Whether values of a type never become a slot (slot-types.ts): a quantity, a date in a local order. */
export function neverTemplated(type: SlotType): boolean {
  return type === "quantity" || type === "local-date";
}

/** Where a ranged value outside `[min, max]` lies, in words that name no bound (the bounds are other requests' values). */
export function rangeSide(type: SlotType, value: string, min: string, max: string): string {
  if (compareRanged(type, value, min) < 0) return "below the confirmed range";
  return compareRanged(type, value, max) > 0 ? "above the confirmed range" : "outside the confirmed range";
}
