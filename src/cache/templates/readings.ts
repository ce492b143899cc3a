/**
 * Readings of a leaf that the text around it decides (docs/templates.md, "Reach: values that were misread"): each reads a
 * leaf as more than its own characters say, so each is narrow and proven by a test of what it must not serve
 * (test/unit/template-reach.test.ts).
 */

/** A plain decimal in ASCII digits (`2.5`, `12`). */
const PLAIN = /^\d+(?:\.\d+)?$/;
/** Three decimals after one to three digits (`1.250`): many locales write 1250 so, whatever follows it. */
const THOUSANDS = /^[1-9]\d{0,2}\.\d{3}$/;

/**
 * Marks as numbers the plain decimals a `%` follows directly (`2.5%`, `1.25%`): a percentage, never a date. Read
 * alone, `2.5` is a day and month (slot-types.ts, a local date, never a slot), so a fee tier of `2.5%` made no
 * template with `1.25%`. A JSON number is a number leaf already; a `%` after a space (`2.5 %`), a decimal comma
 * (`2,5%`: grouped, leaves.ts) and `1.250%` keep their reading.
 *
 * `separators[i]` is the text before `leaves[i]`, `separators[i + 1]` the text after it.
 */
export function markPercents(separators: readonly string[], leaves: ReadonlyArray<{ value: string; kind: "text" | "number" }>): void {
  for (let i = 0; i < leaves.length; i++) {
    const leaf = leaves[i];
    if (separators[i + 1]?.startsWith("%") && PLAIN.test(leaf.value) && !THOUSANDS.test(leaf.value)) leaf.kind = "number";
  }
}
