/** The longest reason a `muscle-mem-template-miss` header carries. */
const MAX_REASON = 200;

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
