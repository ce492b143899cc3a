import { quoted } from "./miss-reason";
import { scriptReason } from "./scripts";
import { compareLevels, fixedPartOf, levelOf, timeOfDay, utcTimeOfDay, weekendOf, type SlotType } from "./slot-types";

/** What a part's reason reads of a slot: its type, confirmed values and fenced parts (learned.ts Slot). */
export interface PartSlot {
  type: SlotType;
  values: readonly string[];
  fencedParts?: readonly string[];
}

/**
 * Why a value's fixed part (fixedPartOf: an identifier's letters, an email's domain; the scripts of any value's
 * letters, scripts.ts) may not be served, or null: one the model answered otherwise for, or one that differs from the part every confirmed value
 * shared (`SUB-4004` where every value was `ORD-…`: the template's shape, so the reason names `ORD`). A
 * part that varied among the confirmed values is data, never named.
 */
export function partReason(slot: PartSlot, value: string): string | null {
  const script = scriptReason(slot.values, value);
  if (script) return script;
  if (slot.type === "number") return numberReason(slot, value);
  if (slot.type === "date") return dateReason(slot, value);
  const part = fixedPartOf(slot.type, value);
  if (part === null) return null;
  const what = slot.type === "email" ? "domain" : "letters";
  if (slot.fencedParts?.includes(part)) return `the model answered otherwise for ${what} ${quoted(part)}`;
  const seen = new Set(slot.values.map((v) => fixedPartOf(slot.type, v)));
  if (seen.size === 1 && !seen.has(part)) return `${what} ${quoted(part)} never confirmed (every confirmed value had ${quoted([...seen][0] ?? "")})`;
  if (slot.type !== "identifier") return null;
  return (
    vendorReason(slot, value) ??
    portReason(slot, value) ??
    versionReason(slot, value) ??
    leadReason(slot, value) ??
    (seen.size === 1 ? levelReason(slot, value, part) : (lettersReason(slot, value, part, seen) ?? wordsReason(slot, value))) ??
    digitsReason(slot, value)
  );
}

/**
 * An identifier's words: its runs of two letters or more (`mirror`, `example`, `org`, `pkgs`, `agent`, `deb`
 * of `mirror.example.org/pkgs/agent-2.5.1.deb`; `INC` of `INC0012345`; `cn` of `web-05.cn.example.com`).
 */
function wordsOf(value: string): string {
  return (value.match(/\p{L}{2,}/gu) ?? []).join(" ");
}

/**
 * Why an identifier whose letters varied may not be served with words no confirmed value had together, or
 * null. A word inside an identifier (a host's domain or region, a file's extension, a ticket's kind) is
 * closed-class like a word of text: the model may decide on it (`.exe` quarantined, a domain off the
 * allow-list, `INC` paged where `REQ`, `CHG` and `TSK` are queued), and the lengths of its letters say
 * nothing (`exe` is as long as `deb`, `cn` as `eu`). Single letters (`A-1042`, `D-4004`) stay data.
 */
function wordsReason(slot: PartSlot, value: string): string | null {
  const own = wordsOf(value);
  if (slot.values.some((v) => wordsOf(v) === own)) return null;
  const confirmed = new Set(slot.values.flatMap((v) => wordsOf(v).split(" ")));
  const unseen = own.split(" ").filter((w) => w !== "" && !confirmed.has(w));
  return unseen.length > 0
    ? `word ${quoted(unseen.join(" "))} never confirmed (a word inside an identifier is closed-class)`
    : "its words were never confirmed together (a word inside an identifier is closed-class)";
}

/** A port glued to a host after a colon, at the end of an identifier (`svc.example.com:8443`). */
function portOf(value: string): number | null {
  const m = /[\p{L}\p{N}]:(\d{1,5})$/u.exec(value);
  return m && !MAC.test(value) ? Number(m[1]) : null;
}

/**
 * Why a host's port may not be served, or null: it must lie between two confirmed ports. As the digits of an
 * id (four digits or more) it was served outside those seen, so `:1022` (privileged: approval) was opened
 * like `:8080`, `:8443` and `:9000`.
 */
function portReason(slot: PartSlot, value: string): string | null {
  const port = portOf(value);
  return port === null || isBetween(port, slot.values.map(portOf)) ? null : `port ${port} lies outside those confirmed`;
}

/**
 * A version, alone or inside an identifier (`2.6.0`; `2.5.1` of `mirror.example.org/pkgs/agent-2.5.1.deb`): three
 * numbers joined by dots, the first and the last of one digit (slot-types.ts VERSION), not part of a longer run of
 * numbers and dots (an IPv4 address).
 */
const VERSION_IN = /(?<![\p{N}.])(\d)\.(\d{1,2})\.(\d)(?!\p{N}|\.\p{N})/u;
const versionOf = (value: string) => VERSION_IN.exec(value)?.slice(1, 4).map(Number) ?? null;

/**
 * Why a version may not be served, or null: it must lie between two confirmed versions, each of its numbers between
 * those confirmed at its place, whatever the identifier's letters. Inside an identifier whose letters varied (a
 * package URL's extension: `.deb`, `.rpm`, `.msi`) its digits were an id's, so `agent-2.3.9.deb`, before a
 * supported 2.4.0, was scheduled like `agent-2.5.1.deb`, `agent-2.6.0.rpm` and `agent-2.4.3.msi`.
 */
function versionReason(slot: PartSlot, value: string): string | null {
  const version = versionOf(value);
  if (version === null) return null;
  const seen = slot.values.map(versionOf);
  const below = seen.some((v) => v !== null && compareLevels(v, version) <= 0);
  const above = seen.some((v) => v !== null && compareLevels(v, version) >= 0);
  const off = version.findIndex(
    (n, i) =>
      !isBetween(
        n,
        seen.map((v) => v?.[i] ?? null),
      ),
  );
  if (below && above && off === -1) return null;
  const where =
    below && above
      ? `its number ${off + 1} lies outside those confirmed`
      : below
        ? "it is above every confirmed version"
        : above
          ? "it is below every confirmed version"
          : "no confirmed value had a version";
  return `version ${version.join(".")}: ${where}`;
}

/** A MAC address: six groups of two hex digits joined by `:` or `-`; its first three are the vendor (OUI). */
const MAC = /^([0-9a-f]{2})[:-]([0-9a-f]{2})[:-]([0-9a-f]{2})(?:[:-][0-9a-f]{2}){3}$/i;
const ouiOf = (value: string) => MAC.exec(value)?.slice(1, 4).join(":").toLowerCase() ?? null;

/**
 * Why a MAC address may not be served, or null: its vendor prefix (`00:50:56`, VMware) must be one a
 * confirmed value had: the model may decide on the vendor (a virtual machine snapshot first), and an OUI
 * of digits only holds no letters for the rules above to keep.
 */
function vendorReason(slot: PartSlot, value: string): string | null {
  const oui = ouiOf(value);
  if (oui === null || slot.values.some((v) => ouiOf(v) === oui)) return null;
  return `vendor prefix ${quoted(oui)} never confirmed (a MAC address's vendor is closed-class)`;
}

/**
 * The first run of digits of an identifier of digits only when it is at least as long as each later run
 * (`96813` of `96813-1234`, `4242` of `4242-4242-4242-4242`), or null (`123-4567`: a phone's subscriber part).
 */
function leadOf(value: string): string | null {
  const runs = /\p{L}/u.test(value) ? [] : (value.match(/\p{N}+/gu) ?? []);
  return runs.length > 1 && /^\p{N}/u.test(value) && runs.every((r) => r.length <= runs[0].length) ? runs[0] : null;
}

/**
 * Why an identifier of digits only may not be served, or null: its first run, as long as each later one, must
 * be one a confirmed value had. Such a run is a code that routes the rest (a ZIP+4's ZIP, a card number's
 * BIN): as an id's digits it was served outside those seen, so `96813-1234` (Hawaii, held) was paid like
 * `94105-1234` and `98101-0001`.
 */
function leadReason(slot: PartSlot, value: string): string | null {
  const lead = leadOf(value);
  return lead === null || slot.values.some((v) => leadOf(v) === lead)
    ? null
    : `its first digits ${quoted(lead)} never confirmed (the first run of an identifier of digits only is a code)`;
}

/** The lengths of a value's runs of `run` (digits: `ACC-1234567` gives `7`; letters: `3`). */
function runLengths(value: string, run: RegExp): string {
  return (value.match(run) ?? []).map((r) => r.length).join(",");
}

const digitRuns = (value: string) => runLengths(value, /\p{N}+/gu);

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
  const runs = (v: string) => runLengths(v, /\p{L}+/gu);
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
  if (below && above) return componentReason(beside, level, part);
  const where = below ? "above" : above ? "below" : "unlike";
  return `level ${level.join(".")} is ${where} every confirmed level of ${quoted(part)}`;
}

/**
 * Why a level of several numbers (`v1.9`, `5x20`) may not be served although it lies between two confirmed
 * ones in order, or null: each of its numbers must lie between those confirmed at its place (`5x20` lies
 * between `3x4` and `10x12`, but a box 20 long was never confirmed).
 */
function componentReason(beside: ReadonlyArray<number[] | null>, level: readonly number[], part: string): string | null {
  const peers = beside.filter((l): l is number[] => l !== null && l.length === level.length);
  const off = level.findIndex(
    (n, i) =>
      !isBetween(
        n,
        peers.map((l) => l[i]),
      ),
  );
  return off === -1 ? null : `level ${level.join(".")}: its number ${off + 1} lies outside those confirmed for ${quoted(part)}`;
}

/** Whether `x` lies between two of `values` (nulls aside): the confirmed values of a slot bound it on both sides. */
function isBetween(x: number, values: ReadonlyArray<number | null>): boolean {
  return values.some((v) => v !== null && v <= x) && values.some((v) => v !== null && v >= x);
}

/**
 * Why a date's parts may not be served, or null: a date-time's time of day as written must lie between
 * those confirmed (a pickup at 18:30 on a day between two confirmed ones lies inside the range of instants
 * although every confirmed pickup was before 17:00), and a date's day of the week must be like one confirmed
 * (a Saturday between two confirmed weekdays, where the model does not deliver at weekends): a weekend day
 * only where one was confirmed, a weekday only where one was.
 */
function dateReason(slot: PartSlot, value: string): string | null {
  const time = timeOfDay(value);
  if (time !== null && !isBetween(time, slot.values.map(timeOfDay)))
    return "its time of day is outside those confirmed (a decision on the hour is not ranged by the dates)";
  const utc = utcTimeOfDay(value);
  if (utc !== null && !isBetween(utc, slot.values.map(utcTimeOfDay)))
    return "its time of day in UTC is outside those confirmed (a cut-off may be in UTC, whatever the offset written)";
  const day = weekendOf(value);
  return day === null || slot.values.some((v) => weekendOf(v) === day) ? null : `a day of the ${day ? "weekend" : "week"} was never confirmed`;
}

/** How many digits a decimal has after its point (0 for a whole number). */
function fractionDigits(value: string): number {
  const point = value.indexOf(".");
  return point === -1 ? 0 : value.length - point - 1;
}

/** How many digits a number has before its point. */
function integerDigits(value: string): number {
  return value.length - (value.includes(".") ? fractionDigits(value) + 1 : 0) - (value.startsWith("-") ? 1 : 0);
}

const PADDED = /^0\d/;

/**
 * Why a number may not be served for how it is written, or null: with as many decimals as no confirmed
 * value had (`32.2` lies between `32.13` and `32.25` as a decimal, but a version `32.2` is below both, and
 * `7.125` may be an amount in a currency of three decimals where every confirmed one had two); or, where
 * it or a confirmed value is padded with zeros (`02139`: a code of a fixed width), with as many digits as
 * no confirmed value had (`9410` between the zip codes `02139` and `94105`, though a zip has 5 digits).
 */
function numberReason(slot: PartSlot, value: string): string | null {
  const own = fractionDigits(value);
  if (!slot.values.some((v) => fractionDigits(v) === own)) return `${own} decimal ${own === 1 ? "place" : "places"} never confirmed`;
  if (!PADDED.test(value) && !slot.values.some((v) => PADDED.test(v))) return null;
  const width = integerDigits(value);
  return slot.values.some((v) => integerDigits(v) === width) ? null : `${width} digits never confirmed where numbers are padded with zeros`;
}
