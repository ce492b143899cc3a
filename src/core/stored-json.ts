import { canonicalJson } from "./canonical";

/** The prefix of a stored answer's keys that are not the message: what the response carried around it, kept for a hit. */
export const AROUND = "muscle-mem:";

/**
 * A stored answer's JSON: canonical (RFC 8785: keys sorted, as the hash form and every stored node are), but for the
 * value of each top-level `muscle-mem:` key (Chat's choice and response fields, a Responses or Anthropic envelope,
 * Gemini's candidate metadata and chunk layout), written with its keys in the order the model sent them. A hit
 * parses the stored text and serves those fields as they come out of it: before 11-28 a vendor object came back
 * with its keys sorted (`{"zeta":1,"alpha":2}` as `{"alpha":2,"zeta":1}`). Numbers and strings are written alike
 * either way (RFC 8785 writes them as JSON.stringify does).
 *
 * @example storedAnswerJson({ role: "assistant", "muscle-mem:response": { z: 1, a: 2 }, content: "x" }) // '{"content":"x","muscle-mem:response":{"z":1,"a":2},"role":"assistant"}'
 */
export function storedAnswerJson(stored: Record<string, unknown>): string {
  const keys = Object.keys(stored).filter((key) => stored[key] !== undefined);
  if (!keys.some((key) => key.startsWith(AROUND))) return canonicalJson(stored);
  const members = keys.sort().map((key) => `${JSON.stringify(key)}:${key.startsWith(AROUND) ? JSON.stringify(stored[key]) : canonicalJson(stored[key])}`);
  return `{${members.join(",")}}`;
}
