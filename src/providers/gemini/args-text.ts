import { canonicalJson } from "../../core/canonical";
import { compactJson, valueTextAt } from "../../core/exact-json";
import type { CanonicalPart, Part } from "./schema";

/**
 * Gemini call `args` as the model (or the server before the Worker) wrote them. Parsed, `12345678901234567891`
 * is the double `12345678901234567000`, `1.0` is `1`, `1e2` is `100`, and an integer-like key moves first: a
 * hit that served the parsed args gave the agent another order id. The recording stores each call's args as
 * their text (`argsJson`, compact: a pretty-printing server's spacing is not the model's), and a hit writes
 * that text back (src/providers/gemini/render.ts).
 */

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * The args text of each function call among `parts`, in order (undefined for a call without args), read from the
 * text of the response or chunk they were parsed from, where they are candidate 0's parts; empty when there is
 * no call.
 */
export function callArgsTexts(text: string, parts: readonly Part[]): Array<string | undefined> {
  if (!parts.some((p) => isObject(p.functionCall))) return [];
  const out: Array<string | undefined> = [];
  parts.forEach((p, i) => {
    if (!isObject(p.functionCall)) return;
    const written = p.functionCall.args === undefined ? undefined : valueTextAt(text, ["candidates", 0, "content", "parts", i, "functionCall", "args"]);
    out.push(written === undefined ? undefined : compactJson(written));
  });
  return out;
}

/** Whether the JSON text `written` is, parsed, the value JSON text `stored` is. */
function sameValue(written: string, stored: string): boolean {
  try {
    return canonicalJson(JSON.parse(written)) === canonicalJson(JSON.parse(stored));
  } catch {
    return false;
  }
}

/**
 * `parts` (stored parts, `argsJson` as JSON.stringify wrote the parsed args) with the i-th call's `argsJson` as
 * `texts[i]` where that text is the same value written otherwise; `parts` itself when none is.
 */
export function withArgsTexts(parts: CanonicalPart[], texts: ReadonlyArray<string | undefined>): CanonicalPart[] {
  if (texts.length === 0) return parts;
  let calls = 0;
  let changed = false;
  const out = parts.map((p) => {
    if (!("functionCall" in p)) return p;
    const text = texts[calls++];
    const call = p.functionCall as { name: string; id?: string; argsJson?: string };
    if (text === undefined || call.argsJson === undefined || text === call.argsJson || !sameValue(text, call.argsJson)) return p;
    changed = true;
    return { ...p, functionCall: { ...call, argsJson: text } };
  });
  return changed ? out : parts;
}
