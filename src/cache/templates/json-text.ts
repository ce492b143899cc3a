/**
 * Reading JSON text in place: where its string values and numbers are, and
 * what a string literal decodes to, position by position. Used to put
 * placeholders into tool-call arguments (and values back) without
 * re-serialising them, so that key order and spacing stay the model's.
 */

/** A literal of JSON text: a string value (object keys excluded) or a number, as the span `[start, end)` (quotes included). */
export interface JsonLiteral {
  kind: "string" | "number";
  start: number;
  end: number;
}

const NUMBER_CHAR = /[-+0-9.eE]/;

/** The end of the string literal that starts (with its quote) at `start`. */
function stringEnd(text: string, start: number): number {
  let i = start + 1;
  while (text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
  return i + 1;
}

/**
 * The string values and numbers of JSON text, in order; null when the text is
 * not JSON. Object keys are not listed: they are never substituted.
 */
export function jsonLiterals(text: string): JsonLiteral[] | null {
  try {
    JSON.parse(text);
  } catch {
    return null;
  }
  const literals: JsonLiteral[] = [];
  const containers: string[] = [];
  let previous = "";
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      const end = stringEnd(text, i);
      const isKey = containers[containers.length - 1] === "{" && (previous === "{" || previous === ",");
      if (!isKey) literals.push({ kind: "string", start: i, end });
      previous = '"';
      i = end;
    } else if (c === "-" || (c >= "0" && c <= "9")) {
      let end = i + 1;
      while (end < text.length && NUMBER_CHAR.test(text[end])) end++;
      literals.push({ kind: "number", start: i, end });
      previous = "0";
      i = end;
    } else {
      if (c === "{" || c === "[") containers.push(c);
      else if (c === "}" || c === "]") containers.pop();
      if (!/\s/.test(c)) previous = c;
      i++;
    }
  }
  return literals;
}

const SHORT_ESCAPES: Record<string, string> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };

/**
 * Decodes the string literal `text[start, end)` (quotes included) and tells,
 * for each UTF-16 unit `k` of the decoded string, where it starts in `text`:
 * `offsets[k]`; `offsets[length]` is the closing quote. The literal must be
 * one that `jsonLiterals` found.
 */
export function decodeString(text: string, start: number, end: number): { value: string; offsets: number[] } {
  let value = "";
  const offsets: number[] = [];
  let i = start + 1;
  while (i < end - 1) {
    offsets.push(i);
    if (text[i] !== "\\") {
      value += text[i];
      i++;
    } else if (text[i + 1] === "u") {
      value += String.fromCharCode(Number.parseInt(text.slice(i + 2, i + 6), 16));
      i += 6;
    } else {
      value += SHORT_ESCAPES[text[i + 1]];
      i += 2;
    }
  }
  offsets.push(end - 1);
  return { value, offsets };
}

/** A string as it stands between the quotes of a JSON string literal (the escaping RFC 8785 and JSON.stringify use). */
export function escapeJsonString(value: string): string {
  return JSON.stringify(value).slice(1, -1);
}
