/**
 * The type of a leaf value. Identity-like types (`identifier`, `email`,
 * `number`, `date`, `name`) may become template slots, and only where an
 * answer on the path copies them (induce.ts); `word` is categorical (a
 * status, a plan, a country code, a verb) and always stays structural.
 * `name` is only a shape (a capitalised word): capitalisation is no evidence
 * that a value is data rather than something the model decides on.
 * `date` is an ISO date, date-time or year-month, ordered in time; `local-date` a date
 * written in a local order (`03/05/2024`, `5.3.2024`, `2024-3-5`) that cannot
 * be ordered safely, so it never becomes a slot (an identifier would serve it
 * outside any range). `time` is a time of day (`17:30`, `09:05:30`), ordered within the day. `quantity`
 * is a number that is no JSON number, plain decimal or time: digit groups (`1.234.567`), a score or
 * ratio (`4/5`), a number with a
 * unit glued to it (`25kg`, `3pm`, `1.5GB`).
 * Typed an identifier, it would vary with no range (`25kg` served from `5kg`, `12kg`, `18kg` where
 * the model decides on the weight); it cannot be ranged safely either, so it never becomes a slot.
 */
export type SlotType = "identifier" | "email" | "number" | "date" | "time" | "local-date" | "quantity" | "name" | "word";

const EMAIL = /^[\p{L}\p{N}_][\p{L}\p{N}_.+-]*@[\p{L}\p{N}_-]+(?:\.[\p{L}\p{N}_-]+)+$/u;
const NUMBER = /^\d+(?:\.\d+)?$/;
/**
 * An amount grouped with commas and written with a decimal point (`4,250.00`: one token, leaves.ts): the number
 * 4250, ranged as one. Without the point (`4,250`) it may be 4.25 with a decimal comma, and it is no token of its own.
 */
const GROUPED_DECIMAL = /^[1-9]\d{0,2}(?:,\d{3})+\.\d+$/;
/**
 * An ISO 8601 date, or date-time (`2024-03-05T10:00:00Z`, `2024-03-05T10:00+02:00`), or year and month
 * (`2024-03`: typed an identifier, it varied with no range, so a billing period before a cut-off was served
 * the answer for later ones).
 */
const DATE = /^\d{4}-\d{2}(?:-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})?)?)?$/;
/**
 * A version (`2.6.0`, `1.10.3`): three numbers joined by dots, the first and the last of one digit, so that neither
 * can be a date's year (`5.3.24`, `05.03.2024`, `24.3.5`, `2.5.10` stay local dates). Read as a local date it was
 * never a slot (the ops desk's releases, docs/templates.md "Reach"). Typed an identifier of digits only, it is a
 * level (levelOf): served only between two confirmed versions, each number between those confirmed at its place,
 * its first number one a confirmed value had (part-reason.ts).
 */
const VERSION = /^\d\.\d{1,2}\.\d$/;
/** Three digit groups joined by `/`, `.` or `-` that are not an ISO date, or a day and month (`12-24`): a date in a local order, or something date-like. */
const LOCAL_DATE = /^(?:\d{1,4}([-/.])\d{1,2}\1\d{1,4}|\d{1,2}-\d{1,2})$/;
/**
 * A day and month written with a dot (`05.03`, `20.3`: a European date): a day 1..31, a month 1..12. Typed
 * a plain decimal it was ranged as one (15.04, the 15th of April, lies between 5.03 and 20.03), so it is a
 * local date; a price whose cents are 01..12 (`12.05`) is one too, and not served (a miss, never wrong).
 */
const DOTTED_DAY_MONTH = /^(?:0?[1-9]|[12]\d|3[01])\.(?:0?[1-9]|1[0-2])$/;
/** ISO 4217 codes of common currencies (an amount's label, not a code's: codes.ts). */
export const CURRENCIES = "EUR|USD|GBP|JPY|CHF|CAD|AUD|NZD|CNY|HKD|SGD|INR|SEK|NOK|DKK|PLN|CZK|HUF|BRL|MXN|ZAR|KRW|TRY".split("|");
/** A currency code glued to an amount (`EUR250`): typed an identifier, it varied with no range, so it is a quantity. */
const CURRENCY_AMOUNT = new RegExp(`^(?:${CURRENCIES.join("|")})\\d+(?:[.,]\\d+)?$`, "i");
/** A time of day, hours and minutes, maybe seconds. */
const TIME = /^\d{1,2}:\d{2}(?::\d{2})?$/;
/** Digit groups joined by `.` `,` `:` or `/` (a grouped amount, a ratio, a score `4/5`), or a number with letters glued after it (a unit). */
const QUANTITY = /^\d+(?:[.,:/]\d+)*(?:\p{L}+)?$/u;
/**
 * Numbers no plain decimal reading orders safely, so quantities (template-hunt3): digits other than ASCII
 * (`٩٩٠٠٠`, fullwidth `９９０００`, `½`: typed identifiers, they varied with no range), an exponent (`3e5`:
 * ranged as a level by its mantissa), a decimal of three places after one to three digits (`1.250`, which
 * many locales read as 1250) or an ISO 8601 duration (`PT600M`: an identifier whose number of three digits
 * is no level, so it varied with no range).
 */
const NON_ASCII_DIGIT = /(?![0-9])\p{N}/u;
const EXPONENT = /^\d+(?:\.\d+)?[eE][+-]?\d+$/;
const THOUSANDS = /^[1-9]\d{0,2}\.\d{3}$/;
const ISO_DURATION = /^P(?=[^T]*\d|T\d)(?:\d+(?:[.,]\d+)?[YMWD])*(?:T(?:\d+(?:[.,]\d+)?[HMS])+)?$/;

/** Whether a value is a number no plain decimal reading orders safely (above): never a slot. */
function isAmbiguousNumber(value: string): boolean {
  return NON_ASCII_DIGIT.test(value) || EXPONENT.test(value) || THOUSANDS.test(value) || ISO_DURATION.test(value);
}

/** A capitalised word or hyphenated capitalised words: a proper noun such as a name or a city. */
const NAME = /^\p{Lu}\p{Ll}+(?:-\p{Lu}\p{Ll}+)*$/u;

/**
 * Classifies a leaf value.
 *
 * @example slotTypeOf("A-1042") // => "identifier"
 * @example slotTypeOf("delivered") // => "word"
 */
export function slotTypeOf(value: string, kind: "text" | "number" = "text"): SlotType {
  if (kind === "number") return "number";
  if (DATE.test(value)) return "date";
  if (VERSION.test(value)) return "identifier";
  if (LOCAL_DATE.test(value) || DOTTED_DAY_MONTH.test(value)) return "local-date";
  if (isAmbiguousNumber(value)) return "quantity";
  if (NUMBER.test(value) || GROUPED_DECIMAL.test(value)) return "number";
  if (EMAIL.test(value)) return "email";
  if (TIME.test(value)) return "time";
  if (QUANTITY.test(value) || CURRENCY_AMOUNT.test(value)) return "quantity";
  if (/\p{N}/u.test(value)) return "identifier";
  if (NAME.test(value)) return "name";
  return "word";
}

/** Whether values of this type may be abstracted at all. */
export function isIdentityLike(type: SlotType): boolean {
  return type !== "word" && type !== "local-date" && type !== "quantity";
}

/** Whether values of this type are ordered, so that a template serves only inside the range seen. */
export function isRanged(type: SlotType): boolean {
  return type === "number" || type === "date" || type === "time";
}

/**
 * A random UUID (version 4, the RFC 9562 variant), in one case: apart from its version and variant, its
 * 122 bits are drawn at random, so its runs of hex letters and digits are noise, not a shape nor letters the
 * model could decide on (every UUID's runs differ: typed by them, a template served almost no new UUID). The
 * nil UUID, other versions (a v1 or v7 UUID holds a time) and mixed case keep the ordinary rules.
 */
const UUID_V4 = /^(?:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}|[0-9A-F]{8}-[0-9A-F]{4}-4[0-9A-F]{3}-[89AB][0-9A-F]{3}-[0-9A-F]{12})$/;

/**
 * The shape of a value: each run of upper-case letters becomes `A`, of
 * lower-case letters `a`, of digits `9`; other characters stay. A template
 * serves only values whose shape it has seen (`A-1042` and `B-7` share `A-9`,
 * `unknown` or `N/A` do not).
 */
export function shapeOf(value: string): string {
  if (UUID_V4.test(value)) return value === value.toLowerCase() ? "<uuid-v4>" : "<UUID-V4>";
  return value
    .replace(/\p{Lu}+/gu, "A")
    .replace(/\p{Ll}+/gu, "a")
    .replace(/\p{N}+/gu, "9");
}

/**
 * The part of a value that a template keeps fixed while every value confirmed in its slot shares it: an
 * identifier's letters (`ORD` of `ORD-1001`: a prefix may be what the model decides on, `SUB-` never
 * refunded), an email's domain, case aside (`acme.com`: a free-mail domain may be refused). Null for
 * other types.
 *
 * @example fixedPartOf("identifier", "ORD-1001") // => "ORD"
 */
export function fixedPartOf(type: SlotType, value: string): string | null {
  if (type === "identifier") return UUID_V4.test(value) ? null : (value.match(/\p{L}+/gu) ?? []).join(" ");
  if (type === "email") return value.slice(value.lastIndexOf("@") + 1).toLowerCase();
  return null;
}

/** A run of digits that reads as a year: a period (`2024-Q3`, `2024-W52`, `H1-2024`) is a level with it. */
const YEAR = /^(?:19|20)\d\d$/;

/**
 * An identifier's level: its digit runs as numbers when each has at most two digits (`Tier2`, `v3`, `L4`,
 * `v1.2`: a level or version the model may decide on by its number, rather than an id drawn at random),
 * or reads as a year beside one that has (a period: `2024-Q3`, `2024-W52`), else null. A template serves a
 * level only between two confirmed with the same letters, each number between those at its place (partReason).
 *
 * @example levelOf("Tier2") // => [2]
 * @example levelOf("A-1042") // => null
 */
export function levelOf(value: string): number[] | null {
  const runs = value.match(/\p{N}+/gu) ?? [];
  const small = (r: string) => r.length <= 2;
  return runs.some(small) && runs.every((r) => small(r) || YEAR.test(r)) ? runs.map(Number) : null;
}

/** Compares two levels of one length, run by run (NaN for levels of different lengths). */
export function compareLevels(a: readonly number[], b: readonly number[]): number {
  if (a.length !== b.length) return Number.NaN;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return 0;
}

/** Where a value of a ranged type lies: a number's value, a date's time, a time's seconds into the day (NaN for one that is none, such as `2024-13-45` or `25:00`). */
export function rangedValue(type: SlotType, value: string): number {
  if (type === "time") {
    const [h, m, sec = 0] = value.split(":").map(Number);
    return h < 24 && m < 60 && sec < 60 ? h * 3600 + m * 60 + sec : Number.NaN;
  }
  return type === "number" ? Number(value.replaceAll(",", "")) : Date.parse(value);
}

/**
 * The time of day a date-time is written with, in seconds (its own offset, not applied), or null for a
 * date with no time. A date-time is ranged in time, and also by this: a decision on the time of day
 * (pickups end at 17:00) lies inside the range of instants on a day between two confirmed ones.
 */
export function timeOfDay(value: string): number | null {
  const t = /T(\d{2}):(\d{2})(?::(\d{2}))?/.exec(value);
  return t ? Number(t[1]) * 3600 + Number(t[2]) * 60 + Number(t[3] ?? 0) : null;
}

/**
 * The time of day of a date-time in UTC, in seconds (its offset applied), or null without a time or an offset.
 * A date-time is ranged by its time of day as written (a local hour) and in UTC (a cut-off at 17:00 UTC):
 * `12:30-05:00` lies between `09:00` and `16:45` as written, yet is 17:30 UTC, after a cut-off every
 * confirmed request was before.
 */
export function utcTimeOfDay(value: string): number | null {
  const local = timeOfDay(value);
  const zone = /(?:Z|([+-])(\d{2}):(\d{2}))$/.exec(value);
  if (local === null || !zone) return null;
  const offset = zone[1] ? (zone[1] === "-" ? -1 : 1) * (Number(zone[2]) * 3600 + Number(zone[3]) * 60) : 0;
  return (((local - offset) % 86400) + 86400) % 86400;
}

/** Whether an ISO date as written falls on a Saturday or Sunday (its own day, not the UTC one), or null for a year and month. */
export function weekendOf(value: string): boolean | null {
  const d = /^(\d{4})-(\d{2})-(\d{2})/.exec(value);
  const day = d ? new Date(Date.UTC(Number(d[1]), Number(d[2]) - 1, Number(d[3]))).getUTCDay() : null;
  return day === null ? null : day === 0 || day === 6;
}

/** Compares two values of a ranged type: numbers numerically, dates in time (offsets applied). NaN when either is not a finite value. */
export function compareRanged(type: SlotType, a: string, b: string): number {
  return rangedValue(type, a) - rangedValue(type, b);
}

/** Whether `value` lies in `[min, max]`; false when any of them is not a finite value of the type. */
export function inRange(type: SlotType, value: string, min: string, max: string): boolean {
  return compareRanged(type, value, min) >= 0 && compareRanged(type, value, max) <= 0;
}
