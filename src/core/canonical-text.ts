import { MAX_JSON_DEPTH } from "./exact-json";

/**
 * RFC 8785 canonical JSON of a JSON text, except that every number keeps the
 * text it was written with: `{"b": 1.0, "a": 12345678901234567893}` becomes
 * `{"a":12345678901234567893,"b":1.0}`. Key order and whitespace go, nothing
 * a reader of the text could tell apart is merged. Null when the text is not
 * JSON, repeats a key in an object, or nests deeper than MAX_JSON_DEPTH: the
 * caller keeps such text as it is.
 */
export function canonicalText(text: string): string | null {
  try {
    JSON.parse(text);
  } catch {
    return null;
  }
  const reader = new Reader(text);
  try {
    const out = reader.value(0);
    return reader.atEnd() ? out : null;
  } catch (error) {
    if (error instanceof NotCanonical) return null;
    throw error;
  }
}

class NotCanonical extends Error {}

/** A reader over text that `JSON.parse` accepted, so that only its structure needs tracking. */
class Reader {
  private i = 0;
  constructor(private readonly text: string) {}

  atEnd(): boolean {
    this.skip();
    return this.i === this.text.length;
  }

  private skip(): void {
    const t = this.text;
    while (this.i < t.length) {
      const c = t.charCodeAt(this.i);
      if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return;
      this.i++;
    }
  }

  /** The canonical text of the value at the cursor. */
  value(depth: number): string {
    if (depth > MAX_JSON_DEPTH) throw new NotCanonical();
    this.skip();
    const c = this.text.charCodeAt(this.i);
    if (c === 0x7b) return this.object(depth + 1);
    if (c === 0x5b) return this.array(depth + 1);
    if (c === 0x22) return JSON.stringify(this.string());
    const start = this.i;
    while (this.i < this.text.length && /[-+.0-9eEtruefalsn]/.test(this.text[this.i])) this.i++;
    return this.text.slice(start, this.i);
  }

  private string(): string {
    const t = this.text;
    const start = this.i;
    let j = start + 1;
    let escaped = false;
    for (;;) {
      const c = t.charCodeAt(j);
      if (c === 0x22) break;
      if (c === 0x5c) {
        escaped = true;
        j += 2;
      } else j++;
    }
    this.i = j + 1;
    return escaped ? (JSON.parse(t.slice(start, j + 1)) as string) : t.slice(start + 1, j);
  }

  private object(depth: number): string {
    this.i++;
    const entries: Array<[string, string]> = [];
    const seen = new Set<string>();
    this.skip();
    if (this.text.charCodeAt(this.i) === 0x7d) {
      this.i++;
      return "{}";
    }
    for (;;) {
      this.skip();
      const key = this.string();
      if (seen.has(key)) throw new NotCanonical();
      seen.add(key);
      this.skip();
      this.i++; // ':'
      entries.push([key, this.value(depth)]);
      this.skip();
      if (this.text.charCodeAt(this.i++) === 0x7d) break; // else ','
    }
    entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(",")}}`;
  }

  private array(depth: number): string {
    this.i++;
    const items: string[] = [];
    this.skip();
    if (this.text.charCodeAt(this.i) === 0x5d) {
      this.i++;
      return "[]";
    }
    for (;;) {
      items.push(this.value(depth));
      this.skip();
      if (this.text.charCodeAt(this.i++) === 0x5d) break;
    }
    return `[${items.join(",")}]`;
  }
}
