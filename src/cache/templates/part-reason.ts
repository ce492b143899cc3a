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
  const part = fixedPartOf(slot.type, value);
  if (part === null) return null;
  const what = slot.type === "email" ? "domain" : "letters";
  if (slot.fencedParts?.includes(part)) return `the model answered otherwise for ${what} ${quoted(part)}`;
  const seen = new Set(slot.values.map((v) => fixedPartOf(slot.type, v)));
  if (seen.size === 1 && !seen.has(part)) return `${what} ${quoted(part)} never confirmed (every confirmed value had ${quoted([...seen][0] ?? "")})`;
  if (slot.type !== "identifier") return null;
  return seen.size === 1 ? levelReason(slot, value, part) : lettersReason(slot, value, part, seen);
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
