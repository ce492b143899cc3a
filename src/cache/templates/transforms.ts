import { slotTypeOf } from "./slot-types";

/**
 * Transforms learned from evidence (docs/templates.md "Derived values"): an
 * answer that writes `15.00` for `amount_cents: 1500`, or `A-17` for `a-17`,
 * does not copy the value, so a copy-only template cannot serve it. One of
 * these simple functions may stand for such a leaf when it maps the slot's
 * value to the answer's leaf in the two trajectories a template is induced
 * from (and exactly one function and slot do); every later binding either
 * renders the model's answer exactly (a confirmation) or refutes the
 * template for good (evidence.ts weigh). A template serves only after
 * `TEMPLATE_MIN_BINDINGS` distinct bindings, so a transform is believed on
 * that many distinct values, never on one example.
 */
export type TransformName = "cents" | "fixed2" | "upper" | "lower" | "capital";

/** A leaf of an answer that a function of a slot gives. */
export interface Derived {
  slot: number;
  fn: TransformName;
}

const INTEGER = /^-?\d+$/;
const DECIMAL = /^-?\d+(?:\.\d+)?$/;

/** Two decimals, exactly, of an integer number of hundredths (no floating point). */
function hundredths(n: bigint): string {
  const sign = n < 0n ? "-" : "";
  const abs = n < 0n ? -n : n;
  return `${sign}${abs / 100n}.${String(abs % 100n).padStart(2, "0")}`;
}

const FUNCTIONS: Record<TransformName, (value: string) => string | null> = {
  /** An integer amount of cents written in units with two decimals: `1500` -> `15.00`. */
  cents: (v) => (INTEGER.test(v) && v.length <= 15 ? hundredths(BigInt(v)) : null),
  /** A whole number written with two decimals: `15` -> `15.00`. */
  fixed2: (v) =>
    INTEGER.test(v) && v.length <= 15
      ? hundredths(BigInt(v) * 100n)
      : DECIMAL.test(v) && /\.\d{1,2}$/.test(v)
        ? v + "0".repeat(2 - v.split(".")[1].length)
        : null,
  upper: (v) => letterForLetter(v, /\p{L}/u.test(v) ? v.toUpperCase() : null),
  lower: (v) => letterForLetter(v, /\p{L}/u.test(v) ? v.toLowerCase() : null),
  /** First letter upper-case, the rest lower-case: `ada` -> `Ada`. */
  capital: (v) => letterForLetter(v, /^\p{L}/u.test(v) ? v.charAt(0).toUpperCase() + v.slice(1).toLowerCase() : null),
};

/**
 * A case function's value only when it maps the value code point for code point: JavaScript lower-cases `İ` to
 * `i` and a combining dot, upper-cases `ß` to `SS`, mappings no confirmed value proved (the model writes `i-40`
 * where the template rendered `i̇-40`: test/unit/template-hunt6.test.ts).
 */
function letterForLetter(value: string, out: string | null): string | null {
  return out !== null && [...out].length === [...value].length ? out : null;
}

/** Every transform, in the order they are tried. */
export const TRANSFORMS: readonly TransformName[] = ["cents", "fixed2", "upper", "lower", "capital"];
const NUMERIC: readonly TransformName[] = ["cents", "fixed2"];
const TEXTUAL: readonly TransformName[] = ["upper", "lower", "capital"];

/** The value a transform gives, or null when it does not apply to this value. */
export function applyTransform(fn: TransformName, value: string): string | null {
  const out = FUNCTIONS[fn](value);
  return out === null || out === value ? null : out;
}

/** Whether a ref of a pattern is a derived leaf. */
export function isDerived(ref: unknown): ref is Derived {
  return typeof ref === "object" && ref !== null && typeof (ref as Derived).slot === "number" && (ref as Derived).fn in FUNCTIONS;
}

/**
 * The one transform of one slot that gives `outA` from the slot's first value
 * and `outB` from its second, or a reason there is none: no function fits, or
 * more than one does (two explanations are no explanation).
 *
 * @example explainDerived([{ type: "number", values: ["1500", "2250"] }], "15.00", "22.50") // => { slot: 0, fn: "cents" }
 */
export function explainDerived(slots: ReadonlyArray<{ type: string; values: readonly string[] }>, outA: string, outB: string): Derived | { reason: string } {
  const found: Derived[] = [];
  slots.forEach((slot, i) => {
    const fns = slot.type === "number" ? NUMERIC : slot.type === "date" || slot.type === "time" ? [] : TEXTUAL;
    for (const fn of fns) if (applyTransform(fn, slot.values[0]) === outA && applyTransform(fn, slot.values[1]) === outB) found.push({ slot: i, fn });
  });
  if (found.length === 1) return found[0];
  const kind = slotTypeOf(outA);
  return {
    reason:
      found.length === 0
        ? `the answer's ${kind} \`${outA}\` is neither a copy nor a simple function of a slot`
        : `the answer's \`${outA}\` has ${found.length} explanations`,
  };
}
