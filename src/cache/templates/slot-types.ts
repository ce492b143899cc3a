/**
 * The type of a leaf value. Identity-like types (`identifier`, `email`,
 * `number`, `date`, `name`) may become template slots, and only where an
 * answer on the path copies them (induce.ts); `word` is categorical (a
 * status, a plan, a country code, a verb) and always stays structural.
 * `name` is only a shape (a capitalised word): capitalisation is no evidence
 * that a value is data rather than something the model decides on.
 */
export type SlotType = "identifier" | "email" | "number" | "date" | "name" | "word";

const EMAIL = /^[\p{L}\p{N}_][\p{L}\p{N}_.+-]*@[\p{L}\p{N}_-]+(?:\.[\p{L}\p{N}_-]+)+$/u;
const NUMBER = /^\d+(?:\.\d+)?$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
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
  if (NUMBER.test(value)) return "number";
  if (EMAIL.test(value)) return "email";
  if (/\p{N}/u.test(value)) return "identifier";
  if (NAME.test(value)) return "name";
  return "word";
}

/** Whether values of this type may be abstracted at all. */
export function isIdentityLike(type: SlotType): boolean {
  return type !== "word";
}

/** Whether values of this type are ordered, so that a template serves only inside the range seen. */
export function isRanged(type: SlotType): boolean {
  return type === "number" || type === "date";
}

/**
 * The shape of a value: each run of upper-case letters becomes `A`, of
 * lower-case letters `a`, of digits `9`; other characters stay. A template
 * serves only values whose shape it has seen (`A-1042` and `B-7` share `A-9`,
 * `unknown` or `N/A` do not).
 */
export function shapeOf(value: string): string {
  return value.replace(/\p{Lu}+/gu, "A").replace(/\p{Ll}+/gu, "a").replace(/\p{N}+/gu, "9");
}

/** Compares two values of a ranged type: numbers numerically, dates as ISO strings. */
export function compareRanged(type: SlotType, a: string, b: string): number {
  if (type === "number") return Number(a) - Number(b);
  return a < b ? -1 : a > b ? 1 : 0;
}
