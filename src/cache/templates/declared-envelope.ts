import { envelopeOf, keptEnvelope, splitEnvelope, withEnvelope } from "../../core/envelope";
import { isFields } from "../../core/fields";
import type { CanonicalMessage } from "../../core/messages";
import type { Bindings } from "./bindings";

/** The case-folded runs of letters or digits of a text. */
const runsOf = (text: string): string[] => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

/** Every string, number and object key in a JSON value. */
export function jsonTexts(value: unknown, out: string[] = []): string[] {
  if (typeof value === "string") out.push(value);
  else if (typeof value === "number") out.push(String(value));
  else if (Array.isArray(value)) for (const item of value) jsonTexts(item, out);
  else if (isFields(value)) {
    for (const [key, item] of Object.entries(value)) {
      out.push(key);
      jsonTexts(item, out);
    }
  }
  return out;
}

/**
 * Whether a JSON value may carry a bound value: a text holds one whole (an echoed prompt), or a run of
 * its letters or digits is a run of one or a piece of three characters or more of one (a decoded
 * token: ` Lov`, `-1001`). Over-eager on purpose: a field dropped is a field missing, one kept wrongly
 * tells the request about another binding.
 */
function carriesBound(value: unknown, bindings: Bindings): boolean {
  const values = Object.values(bindings).map((v) => v.toLowerCase());
  const valueRuns = new Set(values.flatMap(runsOf));
  return jsonTexts(value).some((text) => {
    const folded = text.toLowerCase();
    if (values.some((v) => folded.includes(v))) return true;
    return runsOf(text).some((run) => (run.length >= 2 && valueRuns.has(run)) || (run.length >= 3 && values.some((v) => v.includes(run))));
  });
}

/**
 * A declared answer with only the envelope fields (src/core/envelope.ts) that carry none of the values it
 * was recorded with. The answer is stored with placeholders and served for every binding, but what the
 * upstream sent around it is not rendered: a field that echoes or decodes the prompt (Together's `prompt`,
 * vLLM's `prompt_logprobs`) or the answer's tokens (logprobs) would serve the first request's values.
 */
export function unboundEnvelope(answer: CanonicalMessage, bindings: Bindings): CanonicalMessage {
  const { message, envelope } = splitEnvelope(answer);
  if (!envelope) return answer;
  return withEnvelope(
    message,
    keptEnvelope(envelopeOf(answer), (_part, _name, value) => !carriesBound(value, bindings)),
  ) as CanonicalMessage;
}
