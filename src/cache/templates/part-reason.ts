import { quoted } from "./miss-reason";
import { compareLevels, fixedPartOf, levelOf, type SlotType } from "./slot-types";

/** What a part's reason reads of a slot: its type, confirmed values and fenced parts (learned.ts Slot). */
export interface PartSlot {
  type: SlotType;
  values: readonly string[];
  fencedParts?: readonly string[];
}

/**
 * Why a value's fixed part (fixedPartOf: an identifier's letters, an email's domain) may not be served, or
 * null: one the model answered otherwise for, or one that differs from the part every confirmed value
 * shared (`SUB-4004` where every value was `ORD-…`: the template's shape, so the reason names `ORD`). A
 * part that varied among the confirmed values is data, never named.
 */
export function partReason(slot: PartSlot, value: string): string | null {
  if (slot.type === "number") return fractionReason(slot, value);
  const part = fixedPartOf(slot.type, value);
  if (part === null) return null;
  const what = slot.type === "email" ? "domain" : "letters";
  if (slot.fencedParts?.includes(part)) return `the model answered otherwise for ${what} ${quoted(part)}`;
  const seen = new Set(slot.values.map((v) => fixedPartOf(slot.type, v)));
  if (seen.size === 1 && !seen.has(part)) return `${what} ${quoted(part)} never confirmed (every confirmed value had ${quoted([...seen][0] ?? "")})`;
  if (slot.type !== "identifier") return null;
  return (seen.size === 1 ? levelReason(slot, value, part) : lettersReason(slot, value, part, seen)) ?? digitsReason(slot, value);
}

/** The lengths of a value's runs of digits (`ACC-1234567` gives `7`). */
function digitRuns(value: string): string {
  return (value.match(/\p{N}+/gu) ?? []).map((r) => r.length).join(",");
}

/**
 * Why an identifier's runs of digits may not be served, or null: where every confirmed value had runs of
 * the same lengths, a length may be what the model decides on (`ACC-1234567` where accounts have 8 digits;
 * `Tier100`, no level, after `Tier1`, `Tier2` and `Tier3`), and the shape (`A-9`) does not tell lengths
 * apart. Where the lengths varied (`A-1`, `B-22`, `C-333`), they are data, like letters that varied.
 */
function digitsReason(slot: PartSlot, value: string): string | null {
  const seen = new Set(slot.values.map(digitRuns));
  const own = digitRuns(value);
  return seen.size !== 1 || seen.has(own) ? null : `digits of lengths ${own} never confirmed (every confirmed value had ${[...seen][0]})`;
}

/**
 * Why an identifier whose letters varied among the confirmed values may not be served with letters none
 * had, or null: its runs of letters must be as long as those of a confirmed value (`D-4` after `A-1`,
 * `B-2`, `C-3`; never `SUB-4` or `VIP-4`, which may be what the model decides on).
 */
function lettersReason(slot: PartSlot, value: string, part: string, seen: ReadonlySet<string | null>): string | null {
  if (seen.has(part)) return null;
  const runs = (v: string) => (v.match(/\p{L}+/gu) ?? []).map((r) => r.length).join(",");
  const own = runs(value);
  return slot.values.some((v) => runs(v) === own) ? null : `letters ${quoted(part)} never confirmed, nor any of their length (the letters varied)`;
}

/**
 * Why an identifier's level (levelOf: `Tier5`) may not be served, or null: where every confirmed value
 * had the same letters, a level is ranged, served only between two confirmed values (`Tier1` and `Tier3`
 * serve `Tier2`, not `Tier5`). Where the letters varied (`A-1`, `B-2`), the values are ids, the number too.
 */
function levelReason(slot: PartSlot, value: string, part: string): string | null {
  const level = levelOf(value);
  if (level === null) return null;
  const beside = slot.values.filter((v) => fixedPartOf(slot.type, v) === part).map(levelOf);
  const below = beside.some((l) => l !== null && compareLevels(l, level) <= 0);
  const above = beside.some((l) => l !== null && compareLevels(l, level) >= 0);
  if (below && above) return null;
  const where = below ? "above" : above ? "below" : "unlike";
  return `level ${level.join(".")} is ${where} every confirmed level of ${quoted(part)}`;
}

/** How many digits a decimal has after its point (0 for a whole number). */
function fractionDigits(value: string): number {
  const point = value.indexOf(".");
  return point === -1 ? 0 : value.length - point - 1;
}

/**
 * Why a number with as many decimals as no confirmed value had may not be served, or null: `32.2` lies
 * between `32.13` and `32.25` as a decimal, but a version `32.2` is below both (the model may read it so),
 * and `7.125` may be an amount in a currency of three decimals where every confirmed one had two.
 */
function fractionReason(slot: PartSlot, value: string): string | null {
  const own = fractionDigits(value);
  return slot.values.some((v) => fractionDigits(v) === own) ? null : `${own} decimal ${own === 1 ? "place" : "places"} never confirmed`;
}
